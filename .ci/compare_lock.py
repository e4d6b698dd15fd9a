"""Print where a fresh install differs from the known-good lock: ``compare_lock.py LOCK FREEZE``.

LOCK is the universal constraints file (``name==version ; marker`` lines, markers for other
Pythons included), FREEZE what ``pip freeze`` printed. Only informs: exits 0 either way.
"""

from __future__ import annotations

import sys
from pathlib import Path

from packaging.markers import Marker
from packaging.utils import canonicalize_name


def _pins(path: Path, *, markers: bool) -> dict[str, str]:
    pins: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if "==" not in line:
            continue
        requirement, _, marker = line.partition(";")
        if markers and marker.strip() and not Marker(marker.strip()).evaluate():
            continue
        name, _, version = requirement.partition("==")
        pins[canonicalize_name(name.split("[")[0].strip())] = version.strip()
    return pins


def main(lock: str, freeze: str) -> None:
    locked = _pins(Path(lock), markers=True)
    resolved = _pins(Path(freeze), markers=False)
    differences = [
        f"{name}: {locked.get(name, 'not locked')} -> {version}"
        for name, version in sorted(resolved.items())
        if locked.get(name) != version
    ]
    differences += [f"{name}: {locked[name]} -> not installed" for name in locked.keys() - resolved]
    print("\n".join(differences) or "none: this run installed exactly the locked set")


if __name__ == "__main__":
    main(*sys.argv[1:3])
