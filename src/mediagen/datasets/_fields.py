"""A table's rows as requests: each keyword field a constant, a ``{column}`` template or a
``mediagen.col``; the whole frame is checked for its columns and templates before any row.

``PlanSpec`` holds only the fields (no client, no key), so it pickles: the cluster adapters
send it to workers, which build their partition's requests with it exactly as the driver did.
"""

from __future__ import annotations

import dataclasses
import math
import string
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mediagen.datasets._col import col
from mediagen.datasets._keys import row_keys

if TYPE_CHECKING:
    import pandas as pd


class PlanError(ValueError):
    """The table cannot be planned as asked (a missing column, a bad template, invalid rows);
    nothing was sent. ``problems`` lists ``(row label or None, field, message)``."""

    def __init__(self, message: str, problems: Sequence[tuple[Hashable | None, str, str]]) -> None:
        self.problems = list(problems)
        lines = [message]
        for label, field, text in problems[:20]:
            where = "every row" if label is None else f"row {label!r}"
            lines.append(f"  {where}: {field}: {text}")
        if len(problems) > 20:
            lines.append(f"  ... and {len(problems) - 20} more")
        super().__init__("\n".join(lines))


def _placeholders(field: str, template: str) -> list[str]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise PlanError("a template cannot be read", [(None, field, str(exc))]) from None
    names = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name or name.isdigit():
            raise PlanError(
                "a template names no column",
                [(None, field, f"{{{name}}} in {template!r}: write {{column}}, or {{{{ }}}}")],
            )
        if spec or conversion:
            raise PlanError(
                "a template may only name columns",
                [(None, field, f"{{{name}...}} in {template!r} has a format or conversion")],
            )
        names.append(name)
    return names


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or _is_na(value)


def _is_na(value: Any) -> bool:
    return type(value).__name__ in ("NAType", "NaTType")


def _plain(value: Any) -> Any:
    """A numpy or pandas scalar as the Python value the client sends as JSON."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", None) == 0:
        return item()
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, (str, bytes)):
        return tolist()
    return value


@dataclasses.dataclass(frozen=True)
class PlanSpec:
    """The request fields of a plan (picklable; no client and no key inside)."""

    fields: Mapping[str, Any]

    def columns(self) -> list[str]:
        """Every column a field reads (templates' placeholders and ``col`` names), in order."""
        found: list[str] = []
        for name, value in self.fields.items():
            if isinstance(value, col):
                found.append(value.name)
            elif isinstance(value, str):
                found += _placeholders(name, value)
        return list(dict.fromkeys(found))

    def check_columns(self, df: pd.DataFrame) -> None:
        """Raise :class:`PlanError` naming each column the fields name that ``df`` lacks."""
        missing = [c for c in self.columns() if c not in df.columns]
        if missing:
            where = [
                (None, name, f"column {c!r} is not in the table ({list(df.columns)!r})")
                for name, value in self.fields.items()
                for c in ([value.name] if isinstance(value, col) else [])
                + (_placeholders(name, value) if isinstance(value, str) else [])
                if c in missing
            ]
            raise PlanError("the table lacks a column the fields name", where)

    def requests(self, df: pd.DataFrame) -> Iterator[dict[str, Any]]:
        """One request per row of ``df``, in order (the columns are checked first)."""
        self.check_columns(df)
        columns = self.columns()
        templates = {
            name: value
            for name, value in self.fields.items()
            if isinstance(value, str) and _placeholders(name, value)
        }
        for values in df[columns].itertuples(index=False, name=None):
            row = dict(zip(columns, values, strict=True))
            request: dict[str, Any] = {}
            for name, value in self.fields.items():
                if isinstance(value, col):
                    value = row[value.name]
                elif name in templates:
                    value = value.format_map({c: "" if _missing(v) else v for c, v in row.items()})
                if not isinstance(value, (list, tuple, dict)) and _missing(value):
                    continue  # an empty cell leaves the field out
                request[name] = _plain(value)
            yield request

    def rows(self, df: pd.DataFrame, run_id: str) -> pd.DataFrame:
        """``df``'s index with each row's ``request`` and its ``key`` for run ``run_id``: what
        ``run_rows`` takes (a worker calls this on its own partition)."""
        import pandas as pd

        requests = list(self.requests(df))
        keys = row_keys(run_id, df.index, requests)
        return pd.DataFrame({"request": requests, "key": keys}, index=df.index)
