"""``python -m mediagen_sandbox [--host] [--port] [--data-dir] [--speed]``."""

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
