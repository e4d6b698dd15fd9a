"""Read a model catalog entry: modes, fields, allowed values, defaults, ranges and prices.

A ``Catalog`` wraps one entry of ``GET /v1/models`` (docs/wire-contract.md, "Model catalog
entry"). Widgets build their forms from it; the client uses ``validate()`` to refuse a bad
request before sending it (the same checks as the service's 422s, with the same ``details``
shape; ``problems()`` adds what each was judged against, for the magics to word), and
``estimate_query()`` to turn a submit body into the estimate endpoint's query, so the quote is
for exactly the request that will be sent. Pure: no I/O, no pandas.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mediagen.pricing._durations import stated_seconds
from mediagen.wire import _names as wire
from mediagen.wire._fields import ServiceModel, as_json

#: Fields every mode accepts besides its own (docs/wire-contract.md).
ALWAYS_ACCEPTED = ("model", "mode", "idempotency_key", "project_id")
#: Parameter types whose values are structured (lists or objects), written as JSON by hand.
JSON_TYPES = frozenset(
    {"keyframes", "segments", "multi_prompt", "composition_plan", "elements", "reference_names",
     "object", "array"}
)  # fmt: skip
DEFAULT_MODE = "default"


def _loc(field: str) -> list[str]:
    return ["body", field]


def _problem(field: str, msg: str, kind: str) -> dict[str, Any]:
    return {"loc": _loc(field), "msg": msg, "type": kind}


def _detail(problem: Mapping[str, Any]) -> dict[str, Any]:
    """A problem as the service's 422 lists it (``loc``, ``msg``, ``type``; no ``ctx``)."""
    return {"loc": problem["loc"], "msg": problem["msg"], "type": problem["type"]}


def _with_ctx(problem: Mapping[str, Any], **ctx: Any) -> dict[str, Any]:
    return {**problem, "ctx": ctx}


#: Fields that name the request rather than hold a value to judge.
_NOT_JUDGED = frozenset({"model", "mode", "idempotency_key"})


def _key(value: Any) -> str:
    """How the service compares a value with an allowed one (``5.0`` is ``5``, ``True`` is
    ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _present(request: Mapping[str, Any], name: str) -> bool:
    value = request.get(name)
    return value is not None and value != [] and value != ""


def _fmt(values: Iterable[Any]) -> str:
    return ", ".join(json.dumps(v) if isinstance(v, str) else str(v) for v in values)


class Catalog:
    """One model's catalog entry, read (``entry``: the JSON dict or a ``ModelInfo``)."""

    def __init__(self, entry: Mapping[str, Any] | ServiceModel) -> None:
        self.entry: dict[str, Any] = as_json(entry)

    def __repr__(self) -> str:
        return f"Catalog({self.id!r}, modes={self.mode_ids!r})"

    # --- basics ---------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return str(self.entry.get("id", ""))

    @property
    def type(self) -> str | None:
        return self.entry.get("type")

    @property
    def audio_kind(self) -> str | None:
        return self.entry.get("audio_kind")

    @property
    def parameters(self) -> dict[str, dict[str, Any]]:
        return dict(self.entry.get("parameters") or {})

    @property
    def modes(self) -> list[dict[str, Any]]:
        return [dict(m) for m in self.entry.get("modes") or [] if isinstance(m, Mapping)]

    @property
    def mode_ids(self) -> list[str]:
        return [str(m.get("id")) for m in self.modes]

    @property
    def mode_required(self) -> bool:
        return bool(self.entry.get("mode_required"))

    @property
    def tiers(self) -> list[dict[str, Any]]:
        return list(self.entry.get("tiers") or [])

    @property
    def tier_ids(self) -> list[str]:
        return [str(t.get("id")) for t in self.tiers if t.get("id") is not None]

    @property
    def voices(self) -> list[dict[str, Any]]:
        return list(self.entry.get("voices") or [])

    @property
    def rules(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.entry.get("rules") or [] if isinstance(r, Mapping)]

    @property
    def price_summary(self) -> str:
        return str(self.entry.get("price_summary") or "")

    @property
    def plans(self) -> list[str] | None:
        plans = self.entry.get("plans")
        return None if plans is None else list(plans)

    def mode(self, mode_id: str | None = None) -> dict[str, Any]:
        """The mode ``mode_id`` (default: the only / first mode). KeyError if unknown."""
        modes = self.modes
        if mode_id is None:
            if not modes:
                return {"id": DEFAULT_MODE, "required": [], "optional": list(self.parameters)}
            return dict(modes[0])
        for mode in modes:
            if mode.get("id") == mode_id:
                return dict(mode)
        raise KeyError(f"model {self.id!r} has no mode {mode_id!r} (modes: {_fmt(self.mode_ids)})")

    def mode_for(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """The mode a request runs in, or None when it names an unknown one / needs one."""
        mode_id = request.get("mode")
        if mode_id is None:
            if self.mode_required and len(self.modes) > 1:
                return None
            return self.mode()
        try:
            return self.mode(mode_id)
        except KeyError:
            return None

    def example_request(self, mode_id: str | None = None) -> dict[str, Any]:
        examples = self.entry.get("example_request") or {}
        if mode_id is None:
            mode_id = next(iter(examples), None)
        return dict(examples.get(mode_id) or {})

    # --- fields ---------------------------------------------------------------------------

    def fields(self, mode_id: str | None = None) -> dict[str, list[str]]:
        mode = self.mode(mode_id)
        return {
            "required": list(mode.get("required") or []),
            "optional": list(mode.get("optional") or []),
        }

    def accepted(self, mode_id: str | None = None) -> list[str]:
        f = self.fields(mode_id)
        return [*f["required"], *f["optional"], *ALWAYS_ACCEPTED]

    def parameter(self, name: str) -> dict[str, Any]:
        return dict(self.parameters.get(name) or {})

    def defaults(self, mode_id: str | None = None) -> dict[str, Any]:
        return dict(self.mode(mode_id).get("defaults") or {})

    def max_counts(self, mode_id: str | None = None) -> dict[str, int]:
        return dict(self.mode(mode_id).get("max_counts") or {})

    def price(self, mode_id: str | None = None) -> dict[str, Any]:
        return dict(self.mode(mode_id).get("price") or {})

    def allowed(
        self, field: str, mode_id: str | None = None, tier: str | None = None
    ) -> list[Any] | None:
        """Allowed values of ``field`` in a mode (for ``tier`` when they depend on it)."""
        mode = self.mode(mode_id)
        rule = (mode.get("allowed") or {}).get(field)
        if isinstance(rule, Mapping) and "by_tier" in rule:
            by_tier = rule["by_tier"] or {}
            if tier is None:
                tier = (mode.get("defaults") or {}).get("tier")
            if tier is None or _key(tier) not in by_tier:
                merged: list[Any] = []
                for values in by_tier.values():
                    merged.extend(v for v in values if v not in merged)
                return merged
            return list(by_tier[_key(tier)])
        if isinstance(rule, list):
            return list(rule)
        enum = self.parameter(field).get("enum")
        if field == "tier" and enum is None and self.tier_ids:
            return self.tier_ids
        if field == "voice_name" and self.voices:
            return [v.get("name") for v in self.voices]
        return list(enum) if enum is not None else None

    def range(self, field: str, mode_id: str | None = None) -> tuple[Any, Any]:
        """(minimum, maximum) of a numeric field (None where unbounded); the mode narrows it."""
        schema = self.parameter(field)
        low, high = schema.get("minimum"), schema.get("maximum")
        narrowed = (self.mode(mode_id).get("ranges") or {}).get(field) or {}
        if narrowed.get("minimum") is not None:
            low = narrowed["minimum"] if low is None else max(low, narrowed["minimum"])
        if narrowed.get("maximum") is not None:
            high = narrowed["maximum"] if high is None else min(high, narrowed["maximum"])
        return low, high

    # --- validation -----------------------------------------------------------------------

    def validate(self, request: Mapping[str, Any], kind: str | None = None) -> list[dict]:
        """Problems of ``request`` for this model, as 422 ``details`` (empty: looks valid).

        Mirrors the service's checks that need only the catalog: the mode, fields not in the
        mode, missing required fields, types, enums and allowed values (per tier), numeric
        ranges, list counts and the model's rules. The service stays the judge: passing here
        does not promise a 200.
        """
        return [_detail(p) for p in self.problems(request, kind)]

    def problems(self, request: Mapping[str, Any], kind: str | None = None) -> list[dict]:
        """``validate``'s problems, each with the ``ctx`` it was judged by, for callers that
        word the verdict themselves (the magics): a value's ``ctx`` is ``value_problems``'s, a
        field outside the mode carries the ``accepted`` fields, a rule's problem its ``rule``.
        """
        refused = self._model_problems(request, kind)
        if refused:
            return refused
        mode = self.mode(request.get("mode"))
        problems = [*self._field_problems(request, mode), *self._value_problems(request, mode)]
        # The service checks shapes (types) before anything else and stops there; so do we, so
        # a wrong type is reported alone rather than with rule problems it would cause.
        type_errors = [p for p in problems if p["type"] == "type_error"]
        if type_errors:
            return type_errors
        return problems + self._check_rules(request, dict(mode.get("defaults") or {}))

    def _model_problems(self, request: Mapping[str, Any], kind: str | None) -> list[dict]:
        """The request is for another endpoint, or names no mode / an unknown one."""
        mode_id = request.get("mode")
        if kind is not None and self.type and kind != self.type:
            msg = f"model {self.id!r} makes {self.type}, not {kind}; use the {self.type} endpoint"
            return [_with_ctx(_problem("model", msg, "model_type_mismatch"))]
        if mode_id is None and self.mode_required and len(self.modes) > 1:
            msg = f"required for model {self.id!r}; one of {_fmt(self.mode_ids)}"
            return [_with_ctx(_problem("mode", msg, "missing"), allowed=self.mode_ids)]
        if mode_id is not None and mode_id not in self.mode_ids:
            msg = f"model {self.id!r} has no mode {mode_id!r}; one of {_fmt(self.mode_ids)}"
            return [_with_ctx(_problem("mode", msg, "value_not_allowed"), allowed=self.mode_ids)]
        return []

    def _field_problems(self, request: Mapping[str, Any], mode: Mapping[str, Any]) -> list[dict]:
        """Fields the mode does not accept, and required ones not given."""
        mode_name, problems = mode.get("id"), []
        accepted = self.accepted(mode_name)
        in_order = [n for n in dict.fromkeys(accepted) if n not in ALWAYS_ACCEPTED]
        own = sorted(in_order)
        for name in request:
            if name not in accepted and request.get(name) is not None:
                msg = (
                    f"not accepted by mode {mode_name!r} of model {self.id!r} "
                    f"(accepted: {', '.join(own)})"
                )
                problem = _problem(name, msg, "extra_forbidden_for_mode")
                problems.append(_with_ctx(problem, accepted=in_order))
        for name in mode.get("required") or []:
            if not _present(request, name):
                msg = f"required by mode {mode_name!r} of model {self.id!r}"
                problems.append(_with_ctx(_problem(name, msg, "missing"), required=True))
        return problems

    def _value_problems(self, request: Mapping[str, Any], mode: Mapping[str, Any]) -> list[dict]:
        """Each accepted field's value, judged at the request's tier (``value_problems``)."""
        mode_name = mode.get("id")
        accepted, tier = set(self.accepted(mode_name)), self.tier_for(request, mode_name)
        return [
            problem
            for name, value in request.items()
            if value is not None and name in accepted and name not in _NOT_JUDGED
            for problem in self.value_problems(name, value, mode_name, tier)
        ]

    def tier_for(self, request: Mapping[str, Any], mode_id: str | None = None) -> Any:
        """The tier a request runs at, which tier-dependent allowed values follow: its
        ``tier`` (or ``resolution``, where a model names its tier so) over the mode's default,
        as the service reads it."""
        given = {k: v for k, v in request.items() if v is not None}
        values = {**self.defaults(mode_id), **given}
        return values.get("tier", values.get("resolution"))

    def value_problems(
        self, name: str, value: Any, mode_id: str | None = None, tier: Any = None
    ) -> list[dict[str, Any]]:
        """One field value's problems in a mode, at a tier (``tier_for``): its type first
        (alone), then each check of ``_VALUE_CHECKS``.

        The one place a value is judged on the client: ``validate`` (the client's local checks,
        batches), ``problems`` (the magics) and the studio's form all ask here. Each problem is a
        422 detail plus ``ctx``, what the value was held against (pydantic's names: ``ge``,
        ``le``, ``multiple_of``, ``max_length``, ``actual_length``; ``allowed`` and the ``tier``
        it follows), so a caller words the verdict without judging again; ``validate`` leaves
        ``ctx`` out, as the service does.
        """
        mode = self.mode(mode_id)
        type_error = _type_problem(self.parameter(name).get("type"), value)
        if type_error:
            return [{**_problem(name, type_error, "type_error"), "ctx": {}}]
        found = (check(self, name, value, mode, tier) for check in _VALUE_CHECKS)
        return [
            {**_problem(name, msg, kind), "ctx": ctx}
            for problems in found
            for msg, kind, ctx in problems
        ]

    def _length_problems(self, name: str, value: Any, mode: Mapping, tier: Any) -> list:
        max_length = self.parameter(name).get("max_length")
        if isinstance(value, str) and max_length is not None and len(value) > max_length:
            ctx = {"max_length": max_length, "actual_length": len(value)}
            return [(f"at most {max_length} characters", "string_too_long", ctx)]
        return []

    def _allowed_problems(self, name: str, value: Any, mode: Mapping, tier: Any) -> list:
        if self.parameter(name).get("type") == "voice" or isinstance(value, (list, dict)):
            return []
        by_tier = _by_tier(mode, name)
        if by_tier and _key(tier) not in map(_key, mode["allowed"][name]["by_tier"]):
            return []  # an unknown tier is reported once, on the tier itself
        allowed = self.allowed(name, mode.get("id"), tier)
        if allowed is None or _key(value) in map(_key, allowed):
            return []
        where = f" for tier {tier}" if by_tier else ""
        ctx = {"allowed": allowed, "tier": tier if by_tier else None}
        return [(f"must be one of {_fmt(allowed)}{where}", "value_not_allowed", ctx)]

    def _voice_problems(self, name: str, value: Any, mode: Mapping, tier: Any) -> list:
        if self.parameter(name).get("type") != "voice" or not self.voices:
            return []
        if value in {v.get("name") for v in self.voices} | {v.get("id") for v in self.voices}:
            return []
        names = [v.get("name") for v in self.voices]
        return [(f"unknown voice; one of {_fmt(names)}", "unknown_voice", {"allowed": names})]

    def _number_problems(self, name: str, value: Any, mode: Mapping, tier: Any) -> list:
        if not _is_number(value):
            return []
        low, high = self.range(name, mode.get("id"))
        step = self.parameter(name).get("multiple_of")
        out = []
        if low is not None and value < low:
            out.append((f"must be >= {low}", "greater_than_equal", {"ge": low}))
        if high is not None and value > high:
            out.append((f"must be <= {high}", "less_than_equal", {"le": high}))
        if step and value % step:
            out.append((f"must be a multiple of {step}", "multiple_of", {"multiple_of": step}))
        return out

    def _count_problems(self, name: str, value: Any, mode: Mapping, tier: Any) -> list:
        limit = (mode.get("max_counts") or {}).get(name)
        if limit is not None and isinstance(value, list) and len(value) > limit:
            ctx = {"max_length": limit, "actual_length": len(value)}
            return [(f"at most {limit} items (got {len(value)})", "too_long", ctx)]
        return []

    def _check_rules(
        self, request: Mapping[str, Any], defaults: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """The entry's cross-field rules, each checked by its entry in ``_RULE_CHECKS``."""
        out: list[dict[str, Any]] = []
        for rule in self.rules:
            out.extend(_with_ctx(p, rule=rule) for p in rule_problems(rule, request, defaults))
        out.extend(map(_with_ctx, reference_name_problems(request, defaults)))
        return out

    # --- pricing --------------------------------------------------------------------------

    def estimate_query(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The estimate endpoint's query for a submit body (docs/wire-contract.md table).

        Table-driven: each submit field maps to its query name (``ESTIMATE_QUERY_NAMES``, first
        match wins), the priced duration comes from the first source that gives one, and what
        the table does not name but the price depends on travels in ``params``. The names
        are the wire contract's (``mediagen.wire._names``).
        """
        r = {k: v for k, v in request.items() if v is not None}
        q: dict[str, Any] = {}
        duration = self._priced_duration(r)
        if duration is not None:
            q[wire.ESTIMATE_DURATION] = duration
        names = wire.ESTIMATE_QUERY_NAMES["image" if self.type == "image" else "other"]
        for field, query_name in (*names, *((n, n) for n in wire.ESTIMATE_PASS_THROUGH)):
            if field in r:
                q.setdefault(query_name, r[field])
        length = _text_length(r)
        if length is not None:
            q[wire.ESTIMATE_TEXT_LENGTH] = length
        if isinstance(r.get("reference_images"), list):
            q[wire.ESTIMATE_REFERENCE_IMAGE_COUNT] = len(r["reference_images"])
        if "first_frame" in r:
            q[wire.ESTIMATE_FIRST_FRAME_COUNT] = 1
        params = {
            name: r[name]
            for name in self._priced_fields(r)
            if name in r and name not in _MAPPED and name not in q
        }
        if params:
            q[wire.ESTIMATE_PARAMS] = json.dumps(params, sort_keys=True, separators=(",", ":"))
        return q

    def _priced_duration(self, r: Mapping[str, Any]) -> float | int | None:
        """Seconds the price counts as the request states them (its ``price.duration``
        sources: a duration, a shot list, frames / frame rate); None when an input file's
        length or the service's default decides."""
        mode = self.mode_for(r) or {}
        seconds = stated_seconds(mode.get("price") or {}, {**(mode.get("defaults") or {}), **r})
        return None if seconds is None else _tidy(seconds)

    def _priced_fields(self, request: Mapping[str, Any]) -> list[str]:
        mode = self.mode_for(request)
        if mode is None:
            return []
        price = mode.get("price") or {}
        names: list[str] = []
        by = price.get("by")
        if isinstance(by, str):
            names.extend(by.split("|"))
        names.extend((price.get("multipliers") or {}).keys())
        if isinstance(price.get("duration_from"), str):  # an input file whose length is priced
            names.append(price["duration_from"])
        # fields a priced one is derived from (an aspect preset that sets the size)
        names.extend(rule.get("from") for rule in (price.get("derive") or {}).values())
        names.extend(price.get("per_input") or {})  # inputs priced each (a last frame)
        return names


def _text_length(r: Mapping[str, Any]) -> int | None:
    """Characters spoken (text, or every segment's text); None when the request has no text."""
    texts = [r["text"]] if isinstance(r.get("text"), str) else []
    for segment in r.get("segments") or []:
        if isinstance(segment, Mapping) and isinstance(segment.get("text"), str):
            texts.append(segment["text"])
    return sum(map(len, texts)) if texts else None


# request fields the estimate table maps to a named parameter (never repeated in ``params``)
_MAPPED = frozenset(
    {
        "duration_seconds",
        "audio_duration_seconds",
        "multi_prompt",
        "num_frames",
        "frames_per_second",
        "tier",
        "resolution",
        "quality",
        "size",
        "aspect_ratio",
        "variant",
        "generate_audio",
        "mode",
        "generate_image_count",
        "sample_count",
        "text",
        "segments",
        "reference_images",
        "first_frame",
        "idempotency_key",
    }
)


def _tidy(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 6)


def _by_tier(mode: Mapping[str, Any], field: str) -> bool:
    rule = (mode.get("allowed") or {}).get(field)
    return isinstance(rule, Mapping) and "by_tier" in rule


def _is_integer(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, Mapping) for v in value)


#: Parameter type -> (does a value fit, what to say when it does not). Structured types are
#: checked for their JSON shape only (a list of objects, or one object); the service judges
#: what is inside.
_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda v: isinstance(v, str), "must be a string"),
    "integer": (_is_integer, "must be an integer"),
    "number": (_is_number, "must be a number"),
    "boolean": (lambda v: isinstance(v, bool), "must be true or false"),
    "asset": (lambda v: isinstance(v, str), "must be an asset id (a string)"),
    "voice": (lambda v: isinstance(v, str), "must be a voice name (a string)"),
    "asset_list": (_is_strings, "must be a list of strings"),
    "string_list": (_is_strings, "must be a list of strings"),
    "array": (lambda v: isinstance(v, list), "must be a list of objects"),
    **dict.fromkeys(
        ("keyframes", "segments", "multi_prompt", "elements"),
        (_is_objects, "must be a list of objects"),
    ),
    **dict.fromkeys(
        ("composition_plan", "reference_names", "object"),
        (lambda v: isinstance(v, Mapping), "must be an object"),
    ),
}


def _type_problem(kind: str | None, value: Any) -> str | None:
    check = _TYPES.get(kind or "")
    return check[1] if check is not None and not check[0](value) else None


def _mutually_exclusive(
    rule: Mapping[str, Any], request: Mapping[str, Any], defaults: Mapping[str, Any]
) -> list[dict[str, Any]]:
    names = list(rule.get("fields") or [])
    given = [n for n in names if _present(request, n)]
    if len(given) < 2:
        return []
    msg = f"cannot be combined with {given[0]} (use only one of {', '.join(names)})"
    return [_problem(given[1], msg, "mutually_exclusive")]


def _one_of_required(
    rule: Mapping[str, Any], request: Mapping[str, Any], defaults: Mapping[str, Any]
) -> list[dict[str, Any]]:
    names = list(rule.get("fields") or [])
    if not names or any(_present(request, n) for n in names):
        return []
    return [_problem(names[0], f"one of {', '.join(names)} is required", "missing")]


def _requires(
    rule: Mapping[str, Any], request: Mapping[str, Any], defaults: Mapping[str, Any]
) -> list[dict[str, Any]]:
    field = str(rule.get("field"))
    if not _present(request, field):
        return []
    missing = [n for n in rule.get("needs") or [] if not _present({**defaults, **request}, n)]
    return [_problem(field, f"needs {need} as well", "missing_dependency") for need in missing]


def _max_duration(
    rule: Mapping[str, Any], request: Mapping[str, Any], defaults: Mapping[str, Any]
) -> list[dict[str, Any]]:
    field, maximum = str(rule.get("field")), rule.get("maximum")
    when = rule.get("when") or {}
    if not all(request.get(k, defaults.get(k)) == v for k, v in when.items()):
        return []
    value = request.get(field, defaults.get(field))
    if not isinstance(value, (int, float)) or maximum is None or value <= maximum:
        return []
    cond = ", ".join(f"{k}={v}" for k, v in when.items())
    msg = f"must be <= {maximum}" + (f" when {cond}" if cond else "")
    return [_problem(field, msg, "less_than_equal")]


#: The checks every field value goes through once its type is right, in the order reported.
_VALUE_CHECKS = (
    Catalog._length_problems,
    Catalog._allowed_problems,
    Catalog._voice_problems,
    Catalog._number_problems,
    Catalog._count_problems,
)

#: One check per rule kind the catalog states (the service applies the same table).
_RULE_CHECKS = {
    "mutually_exclusive": _mutually_exclusive,
    "one_of_required": _one_of_required,
    "requires": _requires,
    "max_duration": _max_duration,
}


def rule_problems(
    rule: Mapping[str, Any], request: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """What one catalog rule finds wrong with ``request`` (empty: it holds).

    The one place a rule is judged on the client: ``Catalog.validate`` (the client's local
    checks, batches), ``Catalog.problems`` (the magics) and the studio's form all ask here, and
    only word the answer differently.
    """
    check = _RULE_CHECKS.get(str(rule.get("kind")))
    return check(rule, request, defaults or {}) if check is not None else []


def reference_name_problems(
    request: Mapping[str, Any], defaults: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Aliases in ``reference_names`` name references that are given, one alias each (a
    cross-field check like a rule: ``Catalog.validate`` and the studio's form both ask here)."""
    names = request.get("reference_names")
    if not isinstance(names, Mapping):
        return []
    out = []
    for key, aliases in names.items():
        refs = request.get(key, defaults.get(key))
        where = f"reference_names.{key}"
        if not isinstance(refs, list):
            out.append(_problem(where, f"names {key}, which is not given", "unmatched"))
        elif aliases is not None and len(aliases) != len(refs):
            msg = f"one name per reference: {len(refs)} {key}, {len(aliases)} names"
            out.append(_problem(where, msg, "unmatched"))
    return out


def catalog_for(entry: Mapping[str, Any] | Any) -> Catalog:
    return entry if isinstance(entry, Catalog) else Catalog(entry)
