"""The grid a comparison runs: prompts x settings -> one request body per cell (pure, no I/O).

A setting is a model id (``"pixel-1"``) or the fields that make a variant
(``{"model": "vidra-2", "mode": "text_to_video", "tier": "720p"}``, or a seed). A cell's body
starts from the model's example request for that mode (so fields the model requires and the user
did not give have the values the studio form would show), the setting's fields on top, and the
row's prompt in the model's text field: ``prompt`` for most, ``text`` for speech.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mediagen.display import _html
from mediagen.pricing.catalog import Catalog

#: The fields a prompt can go into, in the order they are preferred.
TEXT_FIELDS = ("prompt", "text")


@dataclass(frozen=True)
class Column:
    """One setting of the grid: its label and the fields it adds to every row's request."""

    label: str
    fields: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.fields["model"])

    def describe(self) -> dict[str, Any]:
        extra = {k: v for k, v in self.fields.items() if k != "model"}
        return {"label": self.label, "model": self.model, "settings_text": _settings(extra)}


@dataclass
class Plan:
    """Rows, columns, and the request body of every cell (row-major)."""

    prompts: list[str]
    columns: list[Column]
    requests: dict[tuple[int, int], dict[str, Any]] = field(default_factory=dict)

    def distinct(self) -> dict[str, dict[str, Any]]:
        """Each different body once, by :func:`request_key` (the service prices each once)."""
        return {request_key(body): body for body in self.requests.values()}


def prompts_of(rows: Any) -> list[str]:
    """The prompts of a list, a pandas Series, or a one-column DataFrame."""
    columns = getattr(rows, "columns", None)
    if columns is not None:
        if len(columns) != 1:
            raise ValueError("pass one column of the DataFrame, e.g. df['prompt']")
        rows = rows[columns[0]]
    if isinstance(rows, str):
        rows = [rows]
    prompts = [str(p) for p in (rows.tolist() if hasattr(rows, "tolist") else list(rows))]
    if not prompts:
        raise ValueError("compare needs at least one prompt")
    return prompts


def columns_of(settings: Iterable[Any] | str | Mapping[str, Any]) -> list[Column]:
    """Columns from model ids and setting dicts; labels are unique and say what differs."""
    if isinstance(settings, str | Mapping):
        settings = [settings]
    found: list[dict[str, Any]] = []
    for setting in settings:
        if isinstance(setting, str):
            found.append({"model": setting})
        elif isinstance(setting, Mapping) and setting.get("model"):
            found.append(dict(setting))
        else:
            raise ValueError(f"a setting is a model id or a dict with 'model': {setting!r}")
    if not found:
        raise ValueError("compare needs at least one model setting")
    columns: list[Column] = []
    seen: dict[str, int] = {}
    for fields in found:
        extra = {k: v for k, v in fields.items() if k != "model"}
        label = " · ".join([fields["model"], *(f"{k} {v}" for k, v in extra.items())])
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label} ({seen[label]})"
        columns.append(Column(label, fields))
    return columns


def text_field(catalog: Catalog, mode_id: str | None) -> str:
    """Where the prompt goes for this model and mode (``prompt``, or ``text`` for speech)."""
    accepted = catalog.accepted(mode_id)
    for name in TEXT_FIELDS:
        if name in accepted:
            return name
    raise ValueError(f"model {catalog.id!r} takes no text prompt (it needs {accepted[:4]})")


def cell_request(catalog: Catalog, column: Column, prompt: str) -> dict[str, Any]:
    """The body of one cell: example request, then the setting, then the prompt."""
    mode_id = column.fields.get("mode")
    if mode_id is None and catalog.mode_required and catalog.modes:
        mode_id = catalog.mode_ids[0]
    body = catalog.example_request(mode_id)
    for name in TEXT_FIELDS:  # the example's own prompt never leaks into a cell
        body.pop(name, None)
    body.update(column.fields)
    body[text_field(catalog, mode_id)] = prompt
    if mode_id is not None:
        body["mode"] = mode_id
    return body


def plan(rows: Any, settings: Any, catalogs: Mapping[str, Catalog]) -> Plan:
    """Every cell's body; an unknown model id fails before anything is priced or sent."""
    result = Plan(prompts_of(rows), columns_of(settings))
    for column in result.columns:
        if column.model not in catalogs:
            known = ", ".join(sorted(catalogs))
            raise ValueError(f"unknown model {column.model!r} (the catalog has: {known})")
    for r, prompt in enumerate(result.prompts):
        for c, column in enumerate(result.columns):
            result.requests[(r, c)] = cell_request(catalogs[column.model], column, prompt)
    return result


def request_key(body: Mapping[str, Any]) -> str:
    """Equal bodies, equal keys (field order does not matter)."""
    return json.dumps(body, sort_keys=True, default=str)


def _settings(extra: Mapping[str, Any]) -> str:
    return _html.settings_text(extra) if extra else ""
