"""``python -m mediagen_sandbox [--host] [--port] [--data-dir] [--speed]``."""

import sys


def _run() -> int:
    try:
        from .server import main
    except ModuleNotFoundError as missing:
        # the same one line as ``mediagen sandbox``: a user without the extra learns the fix,
        # not a traceback (this package never imports mediagen, so the line is written here)
        print(
            f"python -m mediagen_sandbox needs the sandbox extra (no module named "
            f'{missing.name!r}): pip install "mediagen[sandbox]"',
            file=sys.stderr,
        )
        return 1
    return main()


if __name__ == "__main__":
    sys.exit(_run())
