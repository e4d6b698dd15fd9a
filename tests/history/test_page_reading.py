"""Reading list pages straight into columns: the values, and the ways a page can mislead.

The history asks for the next page with a cursor found by scanning the page's bytes, before
the page is parsed; these tests attack that: text that looks like a cursor, a server that
names ``next_cursor`` inside its items, a body that is not a page. The same attacks against the
sandbox, through a relay, are in ``tests/faults/test_history_pages.py``.
"""

from __future__ import annotations

import json
import math

import httpx
import pandas as pd
import pytest
from history_factory import FakeListEndpoint, generation
from hypothesis import HealthCheck, given, settings, strategies as st

from mediagen.client._transport import _answer
from mediagen.history import frame_from_generations, generations_frame
from mediagen.history._pages import (
    STORED_SCHEMA,
    PageError,
    RawPage,
    guess_next_cursor,
    parse_page,
)
from mediagen.history._schema import API_COLUMNS

# --- values: the Arrow reading against a plain Python one ---------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30) | st.sampled_from(
    ['"next_cursor":"evil"', 'a\\"next_cursor\\": "x"', "line\nbreak", "ü ☃ 𝄞"]
)
_output = st.fixed_dictionaries(
    {
        "url": st.just("http://127.0.0.1/files/x"),
        "duration_seconds": st.none() | st.floats(0, 600, allow_nan=False),
        "width": st.none() | st.integers(1, 8192),
        "height": st.none() | st.integers(1, 8192),
    }
)


@st.composite
def _generations(draw):
    status = draw(st.sampled_from(["completed", "failed", "pending"]))
    gen = generation(
        status=status,
        type=draw(st.sampled_from(["image", "video", "audio"])),
        prompt=draw(_text),
        latency=draw(st.floats(0, 1e5, allow_nan=False)),
        credits=draw(st.none() | st.floats(0, 1e6, allow_nan=False)),
        outputs=draw(st.lists(_output, max_size=3)) if status == "completed" else [],
        error=(draw(_text), draw(_text)) if status == "failed" else None,
        idempotency_key=draw(st.none() | _text),
        mode=draw(st.none() | st.sampled_from(["default", "extend"])),
    )
    if draw(st.booleans()):  # fields the history does not keep, some named like page keys
        gen["result_meta"] = {"next_cursor": draw(_text), "has_more": False}
    return gen


def _expected(gen: dict) -> dict:
    """What the history frame holds for one generation, read the plain Python way."""
    outputs = gen.get("outputs") or []
    durations = [o["duration_seconds"] for o in outputs if o.get("duration_seconds") is not None]
    first = outputs[0] if outputs else {}
    error = gen.get("error") or {}
    charged = gen.get("credits_charged") if gen["status"] == "completed" else None
    return {
        "id": gen["id"],
        "prompt": gen["prompt"],
        "status": gen["status"],
        "credits_charged": charged
        if gen["status"] == "completed" and charged is not None
        else None,
        "error_code": error.get("code"),
        "error_message": error.get("message"),
        "n_outputs": len(outputs),
        "output_seconds": float(sum(durations)) if durations else None,
        "width": first.get("width"),
        "height": first.get("height"),
        "idempotency_key": gen.get("idempotency_key"),
        "mode": gen.get("mode"),
    }


def _na_to_none(value):
    if value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def test_the_stored_columns_are_the_frames_service_columns_in_order():
    assert STORED_SCHEMA.names == list(API_COLUMNS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_generations(), max_size=12))
def test_the_arrow_reading_keeps_what_a_plain_python_reading_keeps(gens):
    frame = frame_from_generations(gens)
    assert len(frame) == len(gens)
    for gen, (_, row) in zip(gens, frame.iterrows(), strict=True):
        got = {name: _na_to_none(row[name]) for name in _expected(gen)}
        want = _expected(gen)
        if want["output_seconds"] is not None:
            assert got.pop("output_seconds") == pytest.approx(want.pop("output_seconds"))
        assert got == want
        assert row["created_at"] == pd.Timestamp(gen["created_at"])


@settings(max_examples=40, deadline=None)
@given(st.lists(_generations(), max_size=5), st.none() | _text, st.booleans(), st.booleans())
def test_the_cursor_scan_finds_the_pages_own_cursor_whatever_the_items_say(
    gens, cursor, cursor_first, spaced
):
    page = {"data": gens, "next_cursor": cursor, "has_more": cursor is not None}
    if cursor_first:
        page = {"next_cursor": cursor, "has_more": cursor is not None, "data": gens}
    body = json.dumps(page, separators=(", ", ": ") if spaced else (",", ":")).encode()
    parsed = parse_page(body)
    assert parsed.next_cursor == (cursor or None)
    nested = any("result_meta" in g for g in gens)
    if not (cursor_first and nested):  # only a key inside an item, after the page's, can fool it
        assert guess_next_cursor(body) == parsed.next_cursor


# --- a server that misleads the scan --------------------------------------------------------


class MisleadingEndpoint(FakeListEndpoint):
    """A list endpoint that sends ``next_cursor`` first and names one inside every item, and
    answers a cursor it never gave with the first page again (as a careless server might)."""

    bogus: list[str]

    def __call__(self, query):
        cursor = query.get("after")
        if cursor and not cursor.isdigit():
            self.bogus.append(cursor)
            query = {**query, "after": None}
        page = super().__call__(query)
        for item in page["data"]:
            item["result_meta"] = {"next_cursor": f"bogus-{item['id'][:8]}"}
        body = {"next_cursor": page["next_cursor"], "has_more": page["has_more"], **page}
        return json.dumps(body).encode()


def test_a_wrong_cursor_guess_never_lets_a_wrong_page_in():
    gens = [generation() for _ in range(750)]
    endpoint = MisleadingEndpoint(gens)
    endpoint.bogus = []
    frame = generations_frame(endpoint, journal=None)
    assert frame["id"].is_unique
    assert set(frame["id"]) == {g["id"] for g in gens}
    assert endpoint.bogus  # the scan was fooled, and its page (the first, again) kept out


def test_a_body_that_is_not_an_object_is_a_lost_answer_not_a_page():
    with pytest.raises(httpx.DecodingError):
        _answer(200, b"<html>Sign in</html>", RawPage.of)
    with pytest.raises(httpx.DecodingError):
        _answer(200, b'{"data": [{"id": "x"', RawPage.of)
    with pytest.raises(PageError):
        _answer(200, b"[1, 2]", RawPage.of)
    assert _answer(200, b'{"data": [], "next_cursor": "c2"}', RawPage.of).next_cursor == "c2"
