"""What the magics need from the client, in one place.

The magics speak to ``mediagen.Client`` only through these functions, so a change in the
client's surface is one edit here. Fields are read with ``read_field()``, which accepts the client's
typed models and plain dicts alike (the API is additive-only; unknown fields never matter here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sized
from typing import Any

from mediagen.wire._fields import as_json, read_field

KIND_RESOURCES = {"image": "images", "video": "videos", "audio": "audio"}


def list_models(client: Any, kind: str | None = None) -> list[dict[str, Any]]:
    """Catalog entries (as dicts) of ``kind``, or all of them."""
    models = client.models.list(type=kind) if kind else client.models.list()
    entries = [as_json(m) for m in models]
    return [e for e in entries if kind is None or e.get("type") == kind]


def estimate(client: Any, request: Mapping[str, Any]) -> Any:
    """The service's quote for exactly this request (same pricing as the charge)."""
    models = client.models
    for name in ("estimate_request", "estimate_for"):
        helper = getattr(models, name, None)
        if callable(helper):
            return helper(dict(request))
    raise RuntimeError("the client has no models.estimate_request(request)")


def new_idempotency_key() -> str:
    """One key per cell run (the client's, made where every key is): a retry of this submit
    can never charge twice."""
    from mediagen.client._submit import new_idempotency_key as client_key

    return client_key()


def submit(client: Any, kind: str, request: Mapping[str, Any], idempotency_key: str) -> Any:
    """Submit ``request`` to the endpoint of ``kind``; returns the pending Generation."""
    resource = getattr(client, KIND_RESOURCES[kind])
    return resource.create(**{**request, "idempotency_key": idempotency_key})


def wait(
    client: Any,
    generation: Any,
    *,
    on_poll: Callable[[Any], None],
    timeout: float | None,
    poll_interval: float | None = None,
) -> Any:
    """Block until ``generation`` is terminal, calling ``on_poll`` with each polled state."""
    extra: dict[str, Any] = {}
    if poll_interval is not None:
        extra["poll_interval"] = poll_interval
    return client.generations.wait(generation, timeout=timeout, progress=on_poll, **extra)


def get_generation(client: Any, generation_id: str) -> Any:
    return client.generations.get(generation_id)


def upload(client: Any, path: str) -> str:
    """Upload a local file; returns its asset id."""
    asset = client.uploads.upload(path)
    return str(read_field(asset, "asset_id") or read_field(asset, "id"))


def credits(client: Any) -> Any:
    return client.credits.get()


def is_terminal(generation: Any) -> bool:
    return read_field(generation, "status") in ("completed", "failed")


def history_frame(
    client: Any,
    filters: Mapping[str, Any],
    *,
    sync: bool,
    on_page: Callable[[Sized], Any],
) -> Any:
    """The history from the client's local store, synced first unless ``sync`` is False
    (a sync fetches only what is new since the last one; the store keeps the settled rest)."""
    from mediagen import history

    return history.stored_frame(client, sync=sync, on_page=on_page, **filters)


def expected_seconds(client: Any, generation: Any) -> float | None:
    """How long this generation's model usually takes for this user (``mediagen.history``)."""
    from mediagen import history

    return history.expected_seconds(
        client, read_field(generation, "model"), read_field(generation, "mode")
    )


def forecast_note(client: Any, request: Mapping[str, Any]) -> str | None:
    """How long this request will likely take and how often it fails, from the user's own
    history (``mediagen.history``); None when the store cannot be read (the purchase goes on)."""
    from mediagen import history
    from mediagen.client import MediagenError

    try:
        return history.request_note(client, request)
    except (MediagenError, OSError):
        return None
