"""Checking a submit body or an estimate query against a model's catalog entry, then pricing it.

Both paths share one pricing function and one way of applying defaults, which is what makes the
estimate for a request equal to its charge. Every problem found is collected (not just the
first), so a 422 lists each offending field.
"""

from __future__ import annotations

import json
from typing import Any

from ._model import ASSET_PLACEHOLDER_PREFIX, Ctx, ModelDef
from ._params import ALWAYS_ACCEPTED, BY_KIND, SCHEMA_DEFAULTS
from ._pricing import billable_seconds, derive, key_of, price
from ._registry import model_def, models_of
from ._types import AssetRef, Quote, ValidatedRequest, detail, fail, failed

ENDPOINTS = {"image": "POST /v1/images", "video": "POST /v1/videos", "audio": "POST /v1/audio"}


def _show(values: list) -> str:
    return ", ".join(key_of(v) for v in values)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def pick_mode(entry: dict, mode_id: Any, where: str = "body") -> dict:
    ids = [m["id"] for m in entry["modes"]]
    if mode_id is None:
        if entry["mode_required"]:
            raise fail(
                "mode",
                f"{entry['id']} has several modes and needs one: {', '.join(ids)}",
                "missing",
                where,
            )
        return entry["modes"][0]
    for m in entry["modes"]:
        if m["id"] == mode_id:
            return m
    raise fail(
        "mode",
        f"{mode_id!r} is not a mode of {entry['id']}; its modes: {', '.join(ids)}",
        "value_not_allowed",
        where,
    )


def tier_of(values: dict) -> Any:
    return values.get("tier", values.get("resolution"))


def allowed_values(mode: dict, name: str, values: dict) -> list | None:
    """The values ``name`` may take in ``mode`` (following the tier), or None if unrestricted."""
    allowed = mode["allowed"].get(name)
    if isinstance(allowed, dict):
        # At a tier the table does not list, the tier itself is the problem (reported once,
        # by the tier check); the fields that follow it are not judged against no list.
        by_tier = allowed.get("by_tier", {})
        tier = key_of(tier_of(values))
        return list(by_tier[tier]) if tier in by_tier else None
    return allowed


def check_values(entry: dict, mode: dict, values: dict, errors: list, where: str, names=None):
    """Allowed values (per tier), numeric ranges and list counts of the mode."""
    names = names or {}
    for name in sorted(mode["allowed"]):
        value = values.get(name)
        if value is None:
            continue
        allowed = allowed_values(mode, name, values)
        if allowed is None or isinstance(value, (list, dict)):
            continue
        if key_of(value) not in [key_of(v) for v in allowed]:
            at = f" at tier {tier_of(values)}" if isinstance(mode["allowed"][name], dict) else ""
            errors.append(
                detail(
                    names.get(name, name),
                    f"{key_of(value)!r} is not allowed for {entry['id']} ({mode['id']}){at}; "
                    f"allowed: {_show(allowed) or 'none'}",
                    "value_not_allowed",
                    where,
                )
            )
    tier_ids = [t["id"] for t in entry["tiers"]]
    tier = values.get("tier")
    if tier is not None and tier_ids and "tier" not in mode["allowed"] and tier not in tier_ids:
        errors.append(
            detail(
                names.get("tier", "tier"),
                f"{tier!r} is not a tier of {entry['id']}; tiers: {', '.join(tier_ids)}",
                "value_not_allowed",
                where,
            )
        )
    for name, bounds in sorted(mode["ranges"].items()):
        value = values.get(name)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        low, high = bounds.get("minimum"), bounds.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            errors.append(
                detail(
                    names.get(name, name),
                    f"must be between {key_of(low)} and {key_of(high)} for {entry['id']} "
                    f"({mode['id']}); got {key_of(value)}",
                    "out_of_range",
                    where,
                )
            )
    for name, limit in sorted(mode["max_counts"].items()):
        value = values.get(name)
        if isinstance(value, list) and len(value) > limit:
            errors.append(
                detail(
                    name,
                    f"at most {limit} for {entry['id']} ({mode['id']}); got {len(value)}",
                    "too_many",
                    where,
                )
            )


def check_rules(entry: dict, given: dict, values: dict, errors: list) -> None:
    for rule in entry["rules"]:
        kind = rule["kind"]
        fields = rule.get("fields", [])
        present = [f for f in fields if not _empty(given.get(f))]
        if kind == "mutually_exclusive" and len(present) > 1:
            errors.append(
                detail(
                    present[1],
                    f"cannot be combined with {present[0]} (use only one of {', '.join(fields)})",
                    "mutually_exclusive",
                )
            )
        elif kind == "one_of_required" and not present:
            errors.append(detail(fields[0], f"one of {', '.join(fields)} is required", "missing"))
        elif kind == "max_duration":
            applies = all(values.get(k) == v for k, v in rule.get("when", {}).items())
            value = values.get(rule["field"])
            if applies and isinstance(value, (int, float)) and value > rule["maximum"]:
                when = ", ".join(f"{k}={v}" for k, v in rule.get("when", {}).items())
                errors.append(
                    detail(
                        rule["field"],
                        f"must be at most {rule['maximum']} when {when}; got {key_of(value)}",
                        "less_than_equal",
                    )
                )
        elif kind == "requires" and not _empty(given.get(rule["field"])):
            for need in rule["needs"]:
                if _empty(values.get(need)):
                    errors.append(
                        detail(rule["field"], f"needs {need} as well", "missing_dependency")
                    )


def _check_asset(ctx: Ctx, name: str, asset_id: Any, media: str, loc: str) -> AssetRef | None:
    ref = ctx.lookup.asset(asset_id) if isinstance(asset_id, str) else None
    if ref is None:
        hint = (
            " (replace the example placeholder with an uploaded asset id)"
            if str(asset_id).startswith(ASSET_PLACEHOLDER_PREFIX)
            else " (upload it with POST /v1/uploads, or use a generation output's asset_id)"
        )
        ctx.errors.append(detail(loc, f"asset {asset_id!r} not found{hint}", "asset_not_found"))
        return None
    if ref.media != media:
        ctx.errors.append(
            detail(loc, f"asset {asset_id!r} is {ref.media}, {name} takes {media}", "asset_media")
        )
        return None
    if not ref.ready:
        ctx.errors.append(
            detail(
                loc,
                f"asset {asset_id!r} has no bytes yet: PUT the file to its upload_url first",
                "asset_not_ready",
            )
        )
        return None
    return ref


def asset_ids(entry: dict, given: dict) -> list[Any]:
    """Every asset id a request names, wherever it names it."""
    params = entry["parameters"]
    ids: list[Any] = []
    for name, value in given.items():
        kind = params.get(name, {}).get("type")
        if kind == "asset":
            ids.append(value)
        elif kind == "asset_list" and isinstance(value, list):
            ids.extend(value)
    ids.extend(frame.get("image") for frame in given.get("keyframes") or [])
    for element in given.get("elements") or []:
        ids.extend(element.get("images") or [])
    return ids


def check_assets(ctx: Ctx) -> None:
    """Every asset id exists in the organization, is ready and is of the right media kind."""
    ctx.lookup.assets(asset_ids(ctx.entry, ctx.given))
    params = ctx.entry["parameters"]
    for name, value in ctx.given.items():
        schema = params.get(name, {})
        if schema.get("type") == "asset":
            ref = _check_asset(ctx, name, value, schema["media"], name)
            if ref is not None:
                ctx.assets[name] = ref
        elif schema.get("type") == "asset_list" and isinstance(value, list):
            refs = []
            for i, item in enumerate(value):
                ref = _check_asset(ctx, name, item, schema["media"], f"{name}[{i}]")
                if ref is not None:
                    refs.append(ref)
            ctx.assets[name] = refs
    for i, frame in enumerate(ctx.given.get("keyframes") or []):
        ref = _check_asset(ctx, "keyframes", frame.get("image"), "image", f"keyframes[{i}].image")
        if ref is not None:
            ctx.keyframes.append((int(frame.get("frame_index", 0)), ref))
    for i, element in enumerate(ctx.given.get("elements") or []):
        images = element.get("images") or []
        if not images:
            ctx.errors.append(detail(f"elements[{i}].images", "give at least one image", "missing"))
        for j, image in enumerate(images):
            _check_asset(ctx, "elements", image, "image", f"elements[{i}].images[{j}]")
    source_id = ctx.given.get("source_generation_id")
    if source_id is not None:
        source = ctx.lookup.generation(source_id)
        if source is None:
            ctx.errors.append(
                detail("source_generation_id", f"generation {source_id!r} not found", "not_found")
            )
        elif source.type != "video" or source.status != "completed" or not source.output_paths:
            ctx.errors.append(
                detail(
                    "source_generation_id",
                    f"generation {source_id!r} is a {source.status} {source.type} generation; "
                    "only a completed video can be extended",
                    "source_not_completed_video",
                )
            )
        else:
            ctx.source = source
    previous = ctx.given.get("previous_interaction_id")
    if previous is not None:
        found = ctx.lookup.interaction(previous)
        if found is None or found.model != ctx.entry["id"]:
            ctx.errors.append(
                detail(
                    "previous_interaction_id",
                    f"no interaction {previous!r} of {ctx.entry['id']} in this organization",
                    "not_found",
                )
            )
        else:
            ctx.previous = found


def check_reference_names(ctx: Ctx) -> None:
    names = ctx.given.get("reference_names")
    if not isinstance(names, dict):
        return
    for key, aliases in names.items():
        refs = ctx.values.get(key)
        if not isinstance(refs, list):
            ctx.errors.append(
                detail(f"reference_names.{key}", f"names {key}, which is not given", "unmatched")
            )
        elif aliases is not None and len(aliases) != len(refs):
            ctx.errors.append(
                detail(
                    f"reference_names.{key}",
                    f"one name per reference: {len(refs)} {key}, {len(aliases)} names",
                    "unmatched",
                )
            )


def _quote(
    md: ModelDef,
    mode: dict,
    values: dict,
    ctx: Ctx | None,
    where: str,
    names=None,
    stated: dict | None = None,
):
    """(list credits, billable seconds) from the mode's price object; ``stated`` holds what an
    estimate gives outright (``seconds``, ``characters``, ``inputs``)."""
    stated = stated or {}
    seconds = stated.get("seconds")
    if seconds is None:
        asset_seconds = ctx.asset_seconds if ctx is not None else (lambda name: None)
        seconds = billable_seconds(mode["price"], values, asset_seconds)
    if mode["price"]["unit"] == "second" and seconds is None:
        raise fail(
            "duration_seconds",
            f"{md.entry['id']} is priced per second: give duration_seconds to quote it",
            "missing",
            where,
        )
    return price(
        mode["price"],
        values,
        duration=seconds,
        characters=stated.get("characters"),
        inputs=stated.get("inputs"),
        where=where,
        names=names,
    )


def _model_for(model_id: Any, kind: str | None, where: str) -> ModelDef:
    if not isinstance(model_id, str) or not model_id:
        raise fail("model", "a model id is required (see GET /v1/models)", "missing", where)
    md = model_def(model_id)
    if md is None:
        known = ", ".join(models_of(kind))
        raise fail(
            "model", f"unknown model {model_id!r}; {kind or ''} models: {known}", "not_found", where
        )
    if kind is not None and md.entry["type"] != kind:
        raise fail(
            "model",
            f"{model_id} makes {md.entry['type']}: send it to {ENDPOINTS[md.entry['type']]}",
            "wrong_endpoint",
            where,
        )
    return md


def validate_submit(kind: str, body: dict, lookup) -> ValidatedRequest:
    """The checked, priced request of a submit body, or ValidationFailed listing every problem."""
    md = _model_for(body.get("model"), kind, "body")
    entry = md.entry
    mode = pick_mode(entry, body.get("mode"))
    accepted = set(mode["required"]) | set(mode["optional"])
    errors: list[dict] = []
    given: dict = {}
    for name, value in body.items():
        if name in ALWAYS_ACCEPTED:
            continue
        if name in accepted:
            given[name] = value
        elif SCHEMA_DEFAULTS[kind].get(name, object()) == value:
            continue  # a schema default sent as-is: not a choice the caller made
        elif name in BY_KIND[kind]:
            takes = ", ".join(mode["required"] + mode["optional"])
            errors.append(
                detail(
                    name,
                    f"{entry['id']} ({mode['id']}) does not take {name}; it takes: {takes}",
                    "extra_forbidden_for_mode",
                )
            )
        else:
            errors.append(detail(name, "unknown field", "extra_forbidden"))
    for name in mode["required"]:
        if _empty(given.get(name)):
            errors.append(detail(name, f"required by {entry['id']} ({mode['id']})", "missing"))
    values = {**mode["defaults"], **given}
    derive(mode["price"], values)
    check_values(entry, mode, values, errors, "body")
    check_rules(entry, given, values, errors)
    ctx = Ctx(model=md, mode=mode, given=given, values=values, lookup=lookup, errors=errors)
    if lookup is not None:
        check_assets(ctx)
    check_reference_names(ctx)
    if md.check is not None and not errors:
        md.check(ctx)
    if errors:
        raise failed(errors, f"Invalid request for {entry['id']} ({mode['id']})")
    credits, billable = _quote(md, mode, values, ctx, "body")
    return ValidatedRequest(
        kind=kind,
        model_id=entry["id"],
        mode=mode["id"],
        params=values,
        pricing=mode["price"],
        list_credits=credits,
        billable_duration_seconds=billable,
        outputs=md.outputs(ctx),
        planned_failure=ctx.planned_failure,
        result_meta=md.result_meta(ctx) if md.result_meta is not None else None,
    )


def _parse(name: str, raw: Any, kind: str) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        if kind == "bool":
            if raw.lower() in ("true", "1", "yes"):
                return True
            if raw.lower() in ("false", "0", "no"):
                return False
            raise ValueError
        if kind == "int":
            return int(raw)
        if kind == "number":
            number = float(raw)
            return int(number) if number.is_integer() else number
    except ValueError:
        raise fail(name, f"{raw!r} is not a valid {kind}", f"{kind}_parsing", "query") from None
    return raw


def _has(mode: dict, name: str) -> bool:
    return name in mode["required"] or name in mode["optional"]


# Query names that set a request field: (how the value parses, the fields it may set). The
# value goes to the first field the mode takes whose pattern (if any) it matches, else to the
# last field: ``tier`` is a model's ``resolution`` when that is how it names its tier, and
# ``size`` is a ``WxH`` size or else an aspect ratio.
QUERY_FIELDS: dict[str, tuple[str, tuple[tuple[str, str | None], ...]]] = {
    "tier": ("str", (("resolution", None), ("tier", None))),
    "quality": ("str", (("quality", None),)),
    "image_quality": ("str", (("quality", None),)),
    "image_resolution": ("str", (("resolution", None),)),
    "size": ("str", (("size", "x"), ("aspect_ratio", None))),
    "variant": ("str", (("variant", None),)),
    "generate_audio": ("bool", (("generate_audio", None),)),
}

# Query names that state a priced quantity outright: (how it parses, where it goes). ``inputs``
# counts are per ``price.per_input`` field.
QUERY_QUANTITIES = {
    "text_length": ("int", ("characters", None)),
    "reference_image_count": ("int", ("inputs", "reference_images")),
    "first_frame_count": ("round", ("inputs", "first_frame")),
}


def _target(mode: dict, value: Any, fields: tuple[tuple[str, str | None], ...]) -> str:
    for name, pattern in fields:
        if _has(mode, name) and (pattern is None or pattern in str(value).lower()):
            return name
    return fields[-1][0]


def _query_params(mode: dict, raw: Any) -> dict:
    """The ``params`` JSON object's fields this mode takes."""
    try:
        extra = json.loads(raw)
    except (ValueError, RecursionError):  # 2000 characters nest 1000 deep
        raise fail("params", "must be a JSON object", "json_invalid", "query") from None
    if not isinstance(extra, dict):
        raise fail("params", "must be a JSON object", "json_invalid", "query")
    return extra


def _query_request(md: ModelDef, mode: dict, q: dict) -> tuple[dict, dict, dict]:
    """(request fields, the query name behind each, quantities stated outright) of a query.

    Table-driven: ``QUERY_FIELDS`` and the price object's ``duration_query`` and ``count`` say
    which field each query name sets; ``QUERY_QUANTITIES`` what it states outright.
    """
    price_def = mode["price"]
    given: dict = {}
    names: dict[str, str] = {}
    stated: dict = {"inputs": {}}
    if "params" in q:
        extra = _query_params(mode, q["params"])
        given.update({k: v for k, v in extra.items() if _has(mode, k)})
        names.update({k: "params" for k in extra})
    fields = dict(QUERY_FIELDS)
    if price_def.get("count"):
        fields["generation_count"] = ("int", ((price_def["count"], None),))
    duration_field = price_def.get("duration_query")
    if duration_field is not None and _has(mode, duration_field):
        fields["duration_seconds"] = ("number", ((duration_field, None),))
    elif "duration_seconds" in q:
        stated["seconds"] = float(_parse("duration_seconds", q["duration_seconds"], "number"))
    for name, (kind, targets) in fields.items():
        if name in q:
            value = _parse(name, q[name], kind)
            field = _target(mode, value, targets)
            given[field], names[field] = value, name
    for name, (kind, (where, key)) in QUERY_QUANTITIES.items():
        if name in q:
            value = _parse(name, q[name], "number" if kind == "round" else kind)
            value = round(value) if kind == "round" else value
            stated[where] = value if key is None else stated[where] | {key: value}
    return given, names, stated


def estimate_from_query(model_id: str, query: dict, lookup=None) -> Quote:
    """The list price of what a query describes (docs/wire-contract.md, "Estimate").

    Query names are mapped onto the request fields they price; the mode's defaults fill the
    rest, exactly as a submit would, and the mode's price object prices it. An input file
    whose length is priced (``price.duration_from``), given in ``params`` (and a ``lookup``),
    is priced at its real length, so the quote equals the charge.
    """
    md = _model_for(model_id, None, "query")
    entry = md.entry
    q = {k: v for k, v in query.items() if v not in (None, "")}
    mode = pick_mode(entry, q.get("mode"), "query")
    given, names, stated = _query_request(md, mode, q)
    values = {**mode["defaults"], **given}
    derive(mode["price"], values)
    errors: list[dict] = []
    check_values(entry, mode, values, errors, "query", names)
    if errors:
        raise failed(errors, f"Cannot quote {entry['id']} ({mode['id']})")
    ctx = None
    source = mode["price"].get("duration_from")
    if source in given and lookup is not None and "seconds" not in stated:
        ctx = Ctx(model=md, mode=mode, given=given, values=values, lookup=lookup)
        ref = _check_asset(ctx, source, given[source], entry["parameters"][source]["media"], source)
        for d in ctx.errors:
            d["loc"] = ["query", "params", *d["loc"][1:]]
        if ctx.errors:
            raise failed(ctx.errors, f"Cannot quote {entry['id']} ({mode['id']})")
        ctx.assets[source] = ref
    credits, billable = _quote(md, mode, values, ctx, "query", names, stated)
    return Quote(entry["id"], mode["id"], credits, billable)
