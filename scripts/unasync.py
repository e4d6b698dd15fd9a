"""Write the blocking resources of ``Client`` from the asyncio ones of ``AsyncClient``.

The resources are twins: each public method hands one shared flow to ``client._run`` (or
``client._iterate``), awaited in the asyncio twin, returned in the blocking one. The asyncio
classes in ``src/mediagen/client/_resources.py`` are the source; the blocking classes after
them are this script's output (the way httpcore keeps its ``_sync`` package), so the two cannot
drift: a signature, default or docstring is written once.

    python scripts/unasync.py           rewrite the blocking twins
    python scripts/unasync.py --check   exit 1 when they are not what the source makes

The rewrite is by whole words, in order: ``async def``/``async for``/``async with`` lose their
``async``, ``await`` goes, ``__aiter__`` becomes ``__iter__``, ``AsyncIterator`` ``Iterator``,
``Awaiting...`` ``Blocking...``, ``_AsyncCreate`` ``_SyncCreate``, an ``Async`` class name loses
its prefix and ``aclient`` becomes ``client``; then ruff formats the file (lines that got
shorter may join).
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = [ROOT / "src" / "mediagen" / "client" / "_resources.py"]

SOURCE_MARK = "# The resources of ``AsyncClient``"
OUTPUT_MARK = "# The resources of the blocking ``Client``"
RULE = "# " + "=" * 97
OUTPUT_HEADER = f"""{RULE}
{OUTPUT_MARK}, written from the asyncio ones above by
# ``scripts/unasync.py``: edit those and run it (a test fails when the two differ).
{RULE}
"""

RENAMES = [
    (r"\basync (def|for|with) ", r"\1 "),
    (r"\bawait ", ""),
    (r"\b__aiter__\b", "__iter__"),
    (r"\b__anext__\b", "__next__"),
    (r"\bAwaiting(?=[A-Z])", "Blocking"),
    (r"\b_AsyncCreate\b", "_SyncCreate"),
    (r"\bAsync(?=[A-Z])", ""),
    (r"\baclient\b", "client"),
]


def unasync(source: str) -> str:
    """The blocking twin of asyncio source text."""
    for pattern, replacement in RENAMES:
        source = re.sub(pattern, replacement, source)
    return source


def generated(text: str, path: Path) -> str:
    """``text`` (a module's) with its output section written again from its source section."""
    start = text.index(SOURCE_MARK)
    start = text.rindex("\n", 0, text.rindex("\n", 0, start)) + 1  # the rule above the mark
    end = text.find(OUTPUT_MARK)
    end = len(text) if end < 0 else text.rindex("\n", 0, text.rindex("\n", 0, end)) + 1
    body = text[start:end]
    body = body[body.index(RULE, len(RULE)) + len(RULE) + 1 :]  # after the header's rules
    out = text[:end].rstrip("\n") + "\n\n\n" + OUTPUT_HEADER + unasync(body)
    return _formatted(out, path)


def _formatted(text: str, path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(path), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether it is up to date")
    check = parser.parse_args(argv).check
    stale = []
    for path in TARGETS:
        text = path.read_text()
        new = generated(text, path)
        if new == text:
            continue
        stale.append(path)
        if check:
            name = str(path.relative_to(ROOT))
            lines = text.splitlines(), new.splitlines()
            print("\n".join(difflib.unified_diff(*lines, name, name, lineterm="")))
        else:
            path.write_text(new)
    if check and stale:
        print("the blocking twins are stale: run python scripts/unasync.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
