"""The ``mediagen`` command.

``mediagen lab [options]`` opens JupyterLab on the notebooks, connected to the sandbox it starts
(or to the service named by ``MEDIAGEN_BASE_URL`` and ``MEDIAGEN_API_KEY``): see ``_lab``.
``python -m mediagen.cli`` runs the same command (``__main__``).

``mediagen sandbox [--host] [--port] [--data-dir] [--speed] [--public-url]`` starts the local
service: the process becomes ``python -m mediagen_sandbox`` (``os.execv``; ``mediagen`` never
imports ``mediagen_sandbox``: they are two sides of one contract). Being the server itself
rather than its parent, it leaves nothing behind whatever stops it: Ctrl-C and SIGTERM stop the
server cleanly, and after a ``kill -9`` its render workers notice and exit. Where exec cannot
replace the process (Windows) the server runs as a child, with Ctrl-C / SIGTERM forwarded to it.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

from mediagen._extras import SANDBOX, MissingExtraError, require
from mediagen._version import __version__


def _sandbox(args: argparse.Namespace) -> int:
    require("sandbox", "mediagen sandbox", ("mediagen_sandbox", *SANDBOX))
    cmd = [sys.executable, "-m", "mediagen_sandbox", "--host", args.host, "--port", str(args.port)]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    cmd += ["--speed", str(args.speed)]
    if args.public_url:
        cmd += ["--public-url", args.public_url]
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, cmd)  # noqa: S606 (the sandbox takes this process over)
    child = subprocess.Popen(cmd)

    def forward(signum, _frame):
        if child.poll() is None:
            child.send_signal(signum)

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                # A terminal's Ctrl-C reaches the whole process group, so the child usually
                # stops by itself; forward it only if it did not (a SIGINT sent to us alone).
                try:
                    return child.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    forward(signal.SIGINT, None)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _verify(args: argparse.Namespace) -> int:
    """One line per file; exit status 1 when any file is not ``valid`` (a script's gate). A
    path that is no file says so on its line and the others are still checked. A table run's
    ``run-manifest.json`` is audited against its folder (``_verify_line``)."""
    anchors = None
    if args.trust_anchors is not None:
        with open(args.trust_anchors, encoding="ascii") as handle:
            anchors = handle.read()
    every_valid = True
    for path in args.paths:
        try:
            line, valid = _verify_line(path, anchors)
        except FileNotFoundError:
            line, valid = f"{path}: no such file", False
        print(line)
        every_valid = every_valid and valid
    return 0 if every_valid else 1


def _verify_line(path: str, anchors: str | None) -> tuple[str, bool]:
    """A file's credentials; or, for a run manifest, whether its folder holds exactly the
    outputs it lists, each sidecar as the run recorded it (an output added, dropped or
    swapped shows here; each output's own file is checked by its credentials)."""
    if path.endswith("run-manifest.json"):
        from mediagen.datasets._audit import summary_line

        return summary_line(path)
    from mediagen.provenance import verify

    verdict = verify(path, trust_anchors=anchors)
    return verdict.line(), verdict.status == "valid"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mediagen", description="mediagen command line")
    parser.add_argument("--version", action="version", version=f"mediagen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sandbox = sub.add_parser("sandbox", help="run the local media generation service")
    sandbox.add_argument("--host", default="127.0.0.1")
    sandbox.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    sandbox.add_argument("--data-dir", default=None, help="default: ~/.mediagen/sandbox")
    sandbox.add_argument(
        "--speed", type=float, default=1.0, help="latency multiplier; 0 = as fast as possible"
    )
    sandbox.add_argument(
        "--public-url",
        default=None,
        help="the address clients reach the sandbox by, behind a proxy or a port mapping:"
        " its output links name it",
    )
    sandbox.set_defaults(func=_sandbox)
    verify = sub.add_parser(
        "verify",
        help="check the content credentials of saved outputs, one line per file, and audit a "
        "table run's run-manifest.json against its folder",
    )
    verify.add_argument("paths", nargs="+", metavar="PATH")
    verify.add_argument(
        "--trust-anchors", default=None, metavar="CA.PEM",
        help="PEM file of the CA certificates whose signers count as trusted "
        "(default: the file $MEDIAGEN_C2PA_TRUST_ANCHORS names)",
    )  # fmt: skip
    verify.set_defaults(func=_verify)
    sub.add_parser(
        "lab",
        help="open JupyterLab on the notebooks with the sandbox running (mediagen lab --help)",
        add_help=False,
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; a missing extra is one line on stderr naming its ``pip install`` and
    exit status 1, not a traceback."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["lab"]:
            # The lab command owns its options (and its --help); parse them there.
            from mediagen.cli._lab import main as lab_main

            return lab_main(argv[1:])
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except MissingExtraError as missing:
        print(missing, file=sys.stderr)
        return 1
