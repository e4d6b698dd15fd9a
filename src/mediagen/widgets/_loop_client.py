"""The ``AsyncClient`` a widget's calls go through, on the loop they run on.

Widgets run their calls as tasks on the kernel's asyncio loop and are given the user's client:
a blocking ``Client`` (``mediagen.studio()`` makes one) or an ``AsyncClient``. An httpx async
client belongs to the loop that made it, so a blocking client's calls go through an
``AsyncClient`` made from its settings (``Client.to_async()``: the API key stays inside the
client objects and never reaches a trait) once per loop; an ``AsyncClient`` given is used as it
is. The client keeps no such twin per loop itself, so this is the one place that makes them.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, Client

#: per blocking client, its asyncio twin on each loop (both forgotten with the client or loop)
_twins: weakref.WeakKeyDictionary[
    Client, weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncClient]
] = weakref.WeakKeyDictionary()


def on_loop(client: Client | AsyncClient) -> AsyncClient:
    """The ``AsyncClient`` for ``client`` on the running loop (made on first use)."""
    from mediagen.client import Client

    if not isinstance(client, Client):
        return client
    loop = asyncio.get_running_loop()
    made = _twins.setdefault(client, weakref.WeakKeyDictionary())
    found = made.get(loop)
    if found is None:
        found = made[loop] = client.to_async()
    return found


async def aclose(client: Client | AsyncClient) -> None:
    """Close the ``AsyncClient`` made for ``client`` on the running loop, if one was (one given
    as an ``AsyncClient`` is its owner's to close)."""
    from mediagen.client import Client

    made = _twins.get(client) if isinstance(client, Client) else None
    twin = made.pop(asyncio.get_running_loop(), None) if made is not None else None
    if twin is not None:
        await twin.aclose()
