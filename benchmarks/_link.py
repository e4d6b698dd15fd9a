"""A network link on loopback, for benchmarks that ask what a user on a real network sees: a
TCP relay that delivers what each side sends after a one-way delay, no faster than a bandwidth.

    with NetworkLink(rtt=0.020, mbit_per_s=100) as link:       # listening on link.url
        link.target = ("127.0.0.1", server_port)                 # where it relays to

Each direction of a connection is a queue: a chunk read is due when the link is free to carry
it (bandwidth) plus the one-way delay, and is written in order when due. The kernel's TCP still
runs at both ends, so a request waits a round trip for its answer as it does over a network.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from typing import Any


class NetworkLink:
    """A relay on ``127.0.0.1`` with ``rtt`` seconds of round trip and ``mbit_per_s`` each way."""

    def __init__(self, rtt: float, mbit_per_s: float) -> None:
        self.delay = rtt / 2
        self.rate = mbit_per_s * 1e6 / 8  # bytes a second
        self.target: tuple[str, int] | None = None
        self._loop = asyncio.new_event_loop()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._run, name="network-link", daemon=True)

    def __enter__(self) -> NetworkLink:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._listener.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(
            asyncio.start_server(self._relay, sock=self._listener, limit=1 << 20)
        )
        self._loop.run_forever()

    async def _relay(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        assert self.target is not None, "set the link's target before connecting through it"
        server_r, server_w = await asyncio.open_connection(*self.target, limit=1 << 20)
        for writer in (client_w, server_w):
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with contextlib.suppress(OSError):
            await asyncio.gather(self._carry(client_r, server_w), self._carry(server_r, client_w))
        for writer in (client_w, server_w):
            writer.close()

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One direction: each chunk written when the link has carried it across."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        free_at = 0.0

        async def deliver() -> None:
            while True:
                due, chunk = await queue.get()
                if not chunk:
                    with contextlib.suppress(OSError):
                        writer.write_eof()
                    return
                await asyncio.sleep(max(0.0, due - loop.time()))
                writer.write(chunk)
                await writer.drain()

        delivering = asyncio.ensure_future(deliver())
        try:
            while chunk := await reader.read(64 << 10):
                free_at = max(loop.time(), free_at) + len(chunk) / self.rate
                queue.put_nowait((free_at + self.delay, chunk))
        finally:
            queue.put_nowait((0.0, b""))
            await delivering
