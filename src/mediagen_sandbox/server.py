"""Run the sandbox: open the data dir, bind the port, print the ready lines, serve until stopped.

When ready it prints exactly (then flushes)::

    MEDIAGEN_BASE_URL=http://127.0.0.1:PORT
    MEDIAGEN_API_KEY=...
    MEDIAGEN_SANDBOX_ADMIN_TOKEN=...

``--port 0`` binds a free port and prints the real one. SIGINT/SIGTERM stop it cleanly (the
job runner stops; pending generations are resumed on the next start). With
``--exit-with-stdin`` it also stops when its standard input ends: a parent that holds the other
end of that pipe (``mediagen_sandbox.testing``) stops the sandbox by exiting, however it exits,
``kill -9`` included, as the kernel closes the pipe then.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import urllib.parse
from pathlib import Path

import uvicorn

from . import limits
from .app import create_app
from .config import RuntimeConfig
from .context import SandboxContext, default_data_dir
from .db.schema import SchemaTooNew
from .protocols import PROTOCOLS


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mediagen_sandbox", description="Run the local media generation service."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--data-dir", type=Path, default=None, help="default: ~/.mediagen/sandbox")
    parser.add_argument(
        "--speed", type=float, default=1.0, help="latency multiplier; 0 = as fast as possible"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="render processes per lane (default: from the number of cores)",
    )
    parser.add_argument(
        "--http",
        choices=sorted(PROTOCOLS),
        default="auto",
        help="HTTP/1.1 implementation (default: httptools where installed, else h11)",
    )
    parser.add_argument(
        "--public-url",
        type=_public_url,
        default=None,
        help="the address clients reach this server by, when it is not the one it listens on"
        " (behind a proxy, a forwarded port or a container's port mapping): output and upload"
        " links name it (default: http://HOST:PORT)",
    )
    parser.add_argument("--log-level", default="warning")
    parser.add_argument(
        "--exit-with-stdin",
        action="store_true",
        help="stop when standard input ends (the parent holding it exited)",
    )
    return parser.parse_args(argv)


def _public_url(value: str) -> str:
    """An http(s) URL with a host, without its trailing slash: the links append paths to it."""
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an http:// or https:// address of a host (such as"
            " http://127.0.0.1:9000)"
        )
    return value.rstrip("/")


SWITCH_INTERVAL = 0.0005  # seconds (Python's default is 0.005)


class _Server(uvicorn.Server):
    """Prints the ready lines once uvicorn is really listening."""

    def __init__(self, config: uvicorn.Config, ctx: SandboxContext) -> None:
        super().__init__(config)
        self.ctx = ctx

    @contextlib.contextmanager
    def capture_signals(self):
        """SIGINT/SIGTERM start a graceful shutdown; unlike uvicorn's own version the signal is
        not re-raised afterwards, so a stop by Ctrl-C or SIGTERM exits with status 0."""
        handled = (signal.SIGINT, signal.SIGTERM)
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets=sockets)
        if self.should_exit:
            return
        sys.stdout.write(
            f"MEDIAGEN_BASE_URL={self.ctx.base_url}\n"
            f"MEDIAGEN_API_KEY={self.ctx.bootstrap_key}\n"
            f"MEDIAGEN_SANDBOX_ADMIN_TOKEN={self.ctx.admin_token}\n"
        )
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.speed < 0:
        print("--speed must be >= 0", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")
    # The event loop shares the GIL with the request worker threads: a short switch interval
    # lets it answer light requests promptly while heavy ones are being validated.
    sys.setswitchinterval(SWITCH_INTERVAL)
    data_dir = args.data_dir or default_data_dir()
    try:
        ctx = SandboxContext.open(
            data_dir,
            RuntimeConfig(speed=args.speed),
            workers=None if args.workers is None else max(1, args.workers),
        )
    except SchemaTooNew as exc:
        print(f"cannot open {data_dir}: {exc}", file=sys.stderr)
        return 1
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: without it small responses wait on delayed ACKs.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        print(f"cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    ctx.base_url = args.public_url or f"http://{host}:{port}"
    app = create_app(ctx)
    config = uvicorn.Config(
        app,
        http=PROTOCOLS[args.http],  # a request head over limits.HEAD_BYTES is answered 431
        h11_max_incomplete_event_size=limits.HEAD_BYTES,
        log_level=args.log_level,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    server = _Server(config, ctx)
    if args.exit_with_stdin:
        _stop_at_end_of_stdin(server)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])  # on uvloop where it is installed (uvicorn[standard])
    return 0


def _stop_at_end_of_stdin(server: uvicorn.Server) -> None:
    """Stop ``server`` cleanly once standard input reaches its end."""

    # os.read on the descriptor, not sys.stdin: a daemon thread blocked inside a buffered
    # reader holds its lock, which aborts the interpreter's shutdown
    fd = sys.stdin.fileno()

    def watch() -> None:
        with contextlib.suppress(OSError):
            while os.read(fd, 65536):
                pass
        server.should_exit = True

    threading.Thread(target=watch, name="mediagen-sandbox-stdin", daemon=True).start()
