"""The ``%%mediagen`` cell and ``Catalog.validate`` give the same verdict on every request.

For every model and mode of the sandbox's catalog, each field of the mode is given in turn on a
``%%mediagen`` line, on top of the mode's ready-to-send example, with the values worth judging
(``catalog_samples``: every allowed value at every tier and one that is not, the ends of a
range and one past them, a number off its step, a list one item over its count, text one
character over its length, every voice and one that does not exist, the wrong shapes) written as
a user types them. The cell must refuse exactly when ``Catalog.validate`` refuses the request the
line describes (``typed_request``), and its message must name every field the catalog names. The
cross-field rules stay in: a mask without the references it needs, two fields that exclude each
other, a duration past what an orientation allows.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from mediagen.magics._cell_line import MagicUsageError, parse_cell_line
from mediagen.magics._request import build_request, prompt_field, typed_request
from mediagen.pricing.catalog import ALWAYS_ACCEPTED, Catalog
from mediagen_sandbox.catalog import list_models

ENTRIES = {e["id"]: e for e in list_models()}
MODES = [(e["id"], m["id"]) for e in ENTRIES.values() for m in e["modes"]]


def _typed(value: Any) -> str:
    """A value as a user writes it on the line (``true``, ``a,b``, JSON for structures)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def _samples(catalog_samples, entry: dict, mode: dict, name: str, example: dict) -> list[Any]:
    """The catalog's values worth judging, and both answers a boolean flag takes."""
    found = catalog_samples(entry, mode, name, example)
    if Catalog(entry).parameter(name).get("type") == "boolean":
        found += [True, False]
    return [v for v in found if v is not None]


def _line(entry: dict, mode_id: str, fields: dict[str, Any]) -> str:
    flags = " ".join(f"--{k} {shlex.quote(_typed(v))}" for k, v in fields.items())
    return f"{entry['type']} --model {entry['id']} --mode {mode_id} {flags}"


def _verdicts(model: str, mode_id: str, samples) -> tuple[int, int, list[str]]:
    """(requests judged, lines the magic could not read, disagreements with the catalog)."""
    entry = ENTRIES[model]
    catalog = Catalog(entry)
    mode = catalog.mode(mode_id)
    text_field = prompt_field(entry)
    example = {
        k: v
        for k, v in ((entry.get("example_request") or {}).get(mode_id) or {}).items()
        if k not in ALWAYS_ACCEPTED
    }
    body = str(example.pop(text_field, ""))
    judged, unread, found = 0, 0, []
    for name in [n for n in catalog.accepted(mode_id) if n not in ALWAYS_ACCEPTED]:
        if name == text_field:
            continue
        for value in _samples(samples, entry, mode, name, example):
            options = parse_cell_line(_line(entry, mode_id, {**example, name: value}))
            try:
                request = typed_request(entry, options, body)
            except MagicUsageError:
                unread += 1  # text the line cannot type (a word for a number): no request
                continue
            problems = catalog.validate(request, entry["type"])
            refused = {str(p["loc"][1]).split(".")[0] for p in problems}
            try:
                build_request(entry, options, body)
                said = ""
            except MagicUsageError as exc:
                said = str(exc)
            judged += 1
            if bool(said) != bool(refused) or not all(f in said for f in refused):
                found.append(f"{name}={value!r}: magic {said!r}, validate {sorted(refused)}")
    return judged, unread, found


@pytest.mark.parametrize(("model", "mode_id"), MODES, ids=[f"{m}/{d}" for m, d in MODES])
def test_the_cell_refuses_exactly_when_the_catalog_does_and_names_its_fields(
    model, mode_id, catalog_samples
):
    judged, unread, disagreements = _verdicts(model, mode_id, catalog_samples)
    assert judged > unread, f"only {judged} of {judged + unread} lines read"
    assert not disagreements, f"{len(disagreements)} of {judged}:\n" + "\n".join(disagreements)


def test_a_cell_breaking_a_rule_is_refused_before_anything_is_spent(shell, sandbox, tenant):
    """A mask needs the references it masks, a character image moves for at most 10 s: the cell
    says so, and nothing reaches the ledger."""
    run = shell.run("%%mediagen image --model pixel-1 --mask_image asset_example_image\na cat")
    assert "UsageError: --mask_image needs reference_images as well" in run.stderr
    run = shell.run(
        "%%mediagen video --model motionmax --character_image asset_example_image "
        "--motion_video asset_example_video --duration_seconds 20\na dancer"
    )
    assert "UsageError: --duration_seconds must be <= 10 when character_orientation=image" in (
        run.stderr
    )
    entries = sandbox.admin.ledger(tenant.org_id)["entries"]
    assert [e["kind"] for e in entries] == ["grant"]


@pytest.mark.parametrize(
    ("line", "body", "said"),
    [
        ("video --model wave-1 --first_frame a --num_frames 42", "x", "multiple of 4 (got 42)"),
        ("video --model wave-1 --first_frame a --num_frames 400", "x", "between 40 and 120"),
        ("image --model pixel-1 --generate_image_count 0", "x", "between 1 and 4 (got 0)"),
        ("audio --model voxa-tts --voice_name Zed", "hi", "unknown voice 'Zed'; voices: "),
        ("image --model pixel-1", "x" * 5000, "the cell body (prompt) is at most"),
        (
            'image --model pixel-1 --reference_names \'{"reference_images": ["a"]}\'',
            "x",
            "--reference_names names reference_images, which is not given",
        ),
        ("video --model storyshot --mode multi_shot --multi_prompt '{}'", "", "a list of objects"),
    ],
)
def test_each_verdict_of_the_catalog_is_said_in_the_magics_words(line, body, said):
    entry = ENTRIES[parse_cell_line(line).model]
    with pytest.raises(MagicUsageError) as refused:
        build_request(entry, parse_cell_line(line), body)
    assert said in str(refused.value)
