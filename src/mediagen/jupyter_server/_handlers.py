"""The server extension's HTTP handlers: the page's only way to mediagen.

Every handler is authenticated by Jupyter (``@tornado.web.authenticated``: a request without
the server's token or login cookie gets 403) and ``APIHandler`` checks XSRF on writes. No
response carries the API key: the page gets rows, figures and file bytes.

Live updates are a long-poll (``GET /mediagen/api/events?since=V``), not a WebSocket: it is the
same authenticated, XSRF-checked ``APIHandler`` as every other call (a WebSocket would need its
own origin and token handling), it passes any proxy that passes Jupyter's REST API, and one
request held open per page costs nothing next to the poller it shares.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler, AuthenticatedFileHandler
from jupyter_server.utils import url_path_join

from mediagen.jupyter_server import _rows
from mediagen.jupyter_server._feed import SCOPES, Feed, key_configured, one_line
from mediagen.jupyter_server._media import MediaCache

#: how long one long-poll is held before it answers "nothing new"
HOLD_SECONDS = 20.0
NO_KEY_HELP = (
    "No mediagen API key in this Jupyter server's environment. Start JupyterLab with "
    "`mediagen lab` (the local sandbox, or the service named by MEDIAGEN_BASE_URL and "
    "MEDIAGEN_API_KEY), or set MEDIAGEN_API_KEY (and MEDIAGEN_BASE_URL) before starting "
    "JupyterLab."
)


class _Base(APIHandler):
    @property
    def feed(self) -> Feed:
        return self.settings["mediagen_feed"]  # type: ignore[no-any-return]


class StateHandler(_Base):
    """Whether a key is configured (never the key), and how to set one when not."""

    @tornado.web.authenticated
    def get(self) -> None:
        base_url = os.environ.get("MEDIAGEN_BASE_URL", "")
        self.finish(
            {
                "configured": key_configured(),
                "help": None if key_configured() else NO_KEY_HELP,
                "service": _host(base_url),
                "polling": self.feed.running,
            }
        )


class EventsHandler(_Base):
    """The long-poll: subscribe, wait for a newer version, answer the snapshot.

    ``scope=credits`` (the status bar) gets the credits only and never starts the listing of
    generations; ``scope=all`` (the default: the Generations panel) gets everything.
    ``refresh=1`` (the panel's Refresh button) has the poller read everything at its next turn.
    """

    @tornado.web.authenticated
    async def get(self) -> None:
        subscriber = self.get_query_argument("subscriber", "")[:64]
        since = _int(self.get_query_argument("since", "-1"))
        scope = self.get_query_argument("scope", "all")
        if not subscriber:
            raise tornado.web.HTTPError(400, "subscriber is required")
        if scope not in SCOPES:
            raise tornado.web.HTTPError(400, f"scope is one of {', '.join(SCOPES)}")
        if not key_configured():
            self.finish({"configured": False, "help": NO_KEY_HELP, "version": 0})
            return
        self.feed.subscribe(subscriber, scope)
        if self.get_query_argument("refresh", "") == "1":
            self.feed.refresh_now()
        if since == self.feed.version:  # up to date: hold until something changes
            await self.feed.wait_newer(since, HOLD_SECONDS)
        self.feed.subscribe(subscriber, scope)  # the lease counts from the answer
        self.finish(self.feed.snapshot(scope))

    @tornado.web.authenticated
    def delete(self) -> None:
        self.feed.unsubscribe(self.get_query_argument("subscriber", ""))
        self.set_status(204)
        self.finish()


class PollerHandler(_Base):
    """How many pollers ran and what they sent: what a test counts (no key, no rows)."""

    @tornado.web.authenticated
    def get(self) -> None:
        feed = self.feed
        self.finish(
            {
                "running": feed.running,
                "pollers_started": feed.pollers_started,
                "subscribers": feed.live_subscribers(),
                "watching_generations": feed.watching_generations(),
                "requests_sent": feed.requests_sent,
                "requests": [list(request) for request in feed.request_log],
            }
        )


class SpendHandler(_Base):
    """Credits charged per day and model over the last ``days`` (default 30)."""

    @tornado.web.authenticated
    async def get(self) -> None:
        if not key_configured():
            self.finish({"configured": False, "help": NO_KEY_HELP, "days": [], "total": 0})
            return
        from mediagen.client import AsyncClient

        days = max(1, min(366, _int(self.get_query_argument("days", "30"))))
        since = _rows.start_of_today() - dt.timedelta(days=days - 1)
        async with AsyncClient(journal=False) as client:
            gens = [g async for g in client.generations.list(created_after=since)]
        self.finish({"configured": True, "since": since.date().isoformat(),
                     **_rows.spend_table(gens)})  # fmt: skip


class MediaHandler(AuthenticatedFileHandler):
    """One output's bytes (range requests included, so video seeks), from the server's copy."""

    def get_login_url(self) -> str:
        """Refuse (403) instead of redirecting to the login page, as the API handlers do."""
        raise tornado.web.HTTPError(403)

    @tornado.web.authenticated
    async def get(self, generation_id: str, index: str) -> None:  # type: ignore[override]
        await self._serve(generation_id, index, include_body=True)

    @tornado.web.authenticated
    async def head(self, generation_id: str, index: str) -> None:  # type: ignore[override]
        await self._serve(generation_id, index, include_body=False)

    async def _serve(self, generation_id: str, index: str, include_body: bool) -> None:
        cache: MediaCache = self.settings["mediagen_media"]
        from mediagen.client import MediagenError, NotFoundError, ValidationError

        try:
            path = await cache.path(generation_id, int(index))
        except (LookupError, NotFoundError, ValidationError) as exc:
            # no such output, or an id the service refuses to look up: nothing to serve
            raise tornado.web.HTTPError(404, one_line(exc)) from None
        except MediagenError as exc:  # no key, the service down: said, never with the key
            raise tornado.web.HTTPError(502, one_line(exc)) from None
        self.root = str(path.parent)
        served = tornado.web.StaticFileHandler.get(self, path.name, include_body=include_body)
        if served is not None:
            await served


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise tornado.web.HTTPError(400, f"not a number: {value[:20]!r}") from None


def _host(url: str) -> str | None:
    from mediagen.client._config import shown_host

    return shown_host(url) if url else None


def routes(base_url: str) -> list[tuple[str, Any, dict[str, Any]] | tuple[str, Any]]:
    def at(path: str) -> str:
        return url_path_join(base_url, "mediagen", "api", path)

    return [
        (at("state"), StateHandler),
        (at("events"), EventsHandler),
        (at("poller"), PollerHandler),
        (at("spend"), SpendHandler),
        (at(r"media/([0-9A-Za-z_-]{1,100})/(\d{1,3})"), MediaHandler, {"path": "/"}),
    ]
