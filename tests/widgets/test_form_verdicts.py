"""The studio's form and ``Catalog.validate`` give the same verdict on every value.

For every model and mode of the sandbox's catalog, each field of the mode is set in turn, on
top of the mode's ready-to-send example, to sampled values: the example's, every allowed value
at every tier and one that is not, the ends of its range and one past them, a number off its
step, a list one item over its count, text one character over its length, the wrong shape, and
what a person types into a form (a number as text, JSON as text, broken JSON). The form
(``check``) must flag a field exactly when ``Catalog.validate`` finds a problem with that field
in the request the form sends (``build_request``).

Cross-field rules are taken out of the entries here: the form shows them apart (``"_form"``)
and both ask ``rule_problems`` for them. The one cross-field check left, ``reference_names``
aliases matched against the references given, the form also shows apart: it must say so
exactly when ``Catalog.validate`` names a ``reference_names.<references>`` entry. With the
rules in, the form blocks a request exactly when ``Catalog.validate`` refuses it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from mediagen.pricing.catalog import ALWAYS_ACCEPTED, Catalog
from mediagen.widgets import _form_spec as form
from mediagen_sandbox.catalog import list_models

ENTRIES = {e["id"]: e for e in list_models()}
MODES = [(e["id"], m["id"]) for e in ENTRIES.values() for m in e["modes"]]


def _without_rules(entry: dict) -> dict:
    return {**copy.deepcopy(entry), "rules": []}


def _example(entry: dict, mode: dict) -> dict[str, Any]:
    example = (entry.get("example_request") or {}).get(mode["id"]) or {}
    return {k: v for k, v in example.items() if k not in ALWAYS_ACCEPTED}


def _samples(catalog_samples, entry: dict, mode: dict, name: str, example: dict) -> list[Any]:
    """The catalog's values worth judging, and what a person types into a form: a number as
    text, JSON as text, broken JSON."""
    found = catalog_samples(entry, mode, name, example)
    low, high = Catalog(entry).range(name, mode["id"])
    found += [str(b + past) for b, past in ((low, -1), (high, 1)) if b is not None]
    kind = ((entry.get("parameters") or {}).get(name) or {}).get("type", "string")
    if kind in ("integer", "number"):
        found += ["12", "1.5", "twelve"]
    if isinstance(example.get(name), (list, dict)):
        found.append(json.dumps(example[name]))  # the JSON a person pastes
    return found


def _disagreements(entry: dict, mode_id: str, verdict, samples) -> tuple[int, list[str]]:
    """(requests judged, where ``verdict(form issues, validate's problems)`` is False)."""
    catalog = Catalog(entry)
    mode = catalog.mode(mode_id)
    example = _example(entry, mode)
    checked, found = 0, []
    for name in form.mode_fields(mode):
        for value in _samples(samples, entry, mode, name, example):
            values = {**example, name: value}
            shown = form.check(entry, mode_id, values)
            refused = catalog.validate(form.build_request(entry, mode_id, values), catalog.type)
            checked += 1
            if not verdict(shown, refused):
                found.append(f"{name}={value!r}: form {shown}, validate {refused}")
    return checked, found


def _same_fields(shown: dict, refused: list[dict]) -> bool:
    """The form flags the fields ``validate`` names (``"_form"``: aliases naming no reference)."""
    named = {"_form" if "." in str(p["loc"][1]) else str(p["loc"][1]) for p in refused}
    return set(shown) == named


@pytest.mark.parametrize(("model", "mode_id"), MODES, ids=[f"{m}/{d}" for m, d in MODES])
def test_the_form_flags_a_field_exactly_when_the_catalog_refuses_its_value(
    model, mode_id, catalog_samples
):
    checked, disagreements = _disagreements(
        _without_rules(ENTRIES[model]), mode_id, _same_fields, catalog_samples
    )
    assert not disagreements, f"{len(disagreements)} of {checked}:\n" + "\n".join(disagreements)


@pytest.mark.parametrize(("model", "mode_id"), MODES, ids=[f"{m}/{d}" for m, d in MODES])
def test_with_its_rules_the_form_blocks_a_request_exactly_when_the_catalog_refuses_it(
    model, mode_id, catalog_samples
):
    checked, disagreements = _disagreements(
        ENTRIES[model],
        mode_id,
        lambda shown, refused: bool(shown) == bool(refused),
        catalog_samples,
    )
    assert not disagreements, f"{len(disagreements)} of {checked}:\n" + "\n".join(disagreements)


def test_aliases_must_match_the_references_and_a_misshapen_value_is_reported_alone():
    entry = ENTRIES["vidra-2"]
    example = _example(entry, Catalog(entry).mode("reference_to_video"))
    three_names = {**example, "reference_names": {"reference_images": ["a", "b", "c"]}}
    assert form.check(entry, "reference_to_video", three_names) == {
        "_form": "Reference names: one name per reference: 1 reference_images, 3 names"
    }
    # one id where a list belongs: the shape is the problem, not the count of names it causes
    assert form.check(entry, "reference_to_video", {**three_names, "reference_images": "a"}) == {
        "reference_images": "Reference images must be a list of strings"
    }
