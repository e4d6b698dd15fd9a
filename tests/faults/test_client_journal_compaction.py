"""The request journal stays small: generations that finished long ago are folded into its
settled file, everything recovery needs stays, readers see the same history, and a kill -9 at
any moment of a compaction loses nothing."""

from __future__ import annotations

import datetime as dt
import json
import random
import signal
import subprocess
import sys
import time

import pytest

import mediagen
from mediagen.display._progress import expected_seconds
from mediagen.history import journal_columns
from mediagen.local import _compaction as compaction
from mediagen.local._journal import Journal, make_record, settled_path

NOW = dt.datetime(2026, 11, 26, 12, 0, tzinfo=dt.timezone.utc)
SERVICE, KEY_ID = "http://svc", "key_x"


def _at(days_ago: float, seconds: float = 0.0) -> str:
    when = NOW - dt.timedelta(days=days_ago) + dt.timedelta(seconds=seconds)
    return when.isoformat().replace("+00:00", "Z")


def _request(n: int) -> dict:
    return {"model": "pixel-1", "prompt": f"a lighthouse at dusk, take {n}", "quality": "low"}


def _write_submit(journal: Journal, n: int, days_ago: float, end: str | None) -> None:
    """One submit's records, ``days_ago``: an attempt, then as ``end`` says: ``finished`` (it
    was answered and completed 30 s later), ``pending`` (answered, not finished),
    ``unanswered`` (the answer was lost) or ``absent`` (lost, and never reached the service)."""
    key, gid = f"key-{n}", f"00000000-0000-4000-8000-{n:012d}"
    request, estimate = _request(n), {"credits": 2.0, "credits_after_discount": 1.8}
    generation = {"id": gid, "type": "image", "model": "pixel-1", "idempotency_key": key,
                  "status": "pending"}  # fmt: skip
    common = {"service": SERVICE, "key_id": KEY_ID, "kind": "image", "idempotency_key": key}
    steps = [make_record("attempt", request=request, estimate=estimate, **common)]
    if end in ("finished", "pending"):
        steps.append(make_record("submitted", request=request, generation=generation,
                                 estimate=estimate, **common))  # fmt: skip
    if end == "finished":
        done = {**generation, "status": "completed", "credits_charged": 1.8}
        steps.append(make_record("finished", generation=done, **common))
    if end in ("unanswered", "absent"):
        steps.append(make_record("unanswered", request=request, **common))
    if end == "absent":
        steps.append(make_record("absent", **common))
    for i, record in enumerate(steps):
        journal.append({**record, "at": _at(days_ago, 30.0 * i)})


def _generation_ids(records) -> list[str]:
    return sorted({r["generation_id"] for r in records if r.get("generation_id")})


def _merged(journal: Journal) -> dict:
    """Per generation, its records merged, without the times of the last one."""
    skip = ("at", "event", "submitted_at")
    merged = journal.latest().items()
    return {gid: {k: v for k, v in r.items() if k not in skip} for gid, r in merged}


def _views(journal: Journal) -> dict:
    """Everything the readers of the journal take from it."""
    ids = _generation_ids(journal.iter_records())
    keys = [f"key-{int(gid[-12:])}" for gid in ids]
    return {
        "history": journal_columns(journal, ids, keys),
        "latest": _merged(journal),
        "pending": sorted(r["idempotency_key"] for r in journal.pending()),
        "unanswered": sorted(r["idempotency_key"] for r in journal.unanswered()),
        "forecast": expected_seconds(journal, "pixel-1"),
    }


def test_old_finished_generations_fold_away_and_what_recovery_needs_stays(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    _write_submit(journal, 1, 60, "finished")  # old and done: folded
    _write_submit(journal, 2, 45, "finished")  # old and done: folded
    _write_submit(journal, 3, 5, "finished")  # recent: stays
    _write_submit(journal, 4, 60, "pending")  # never seen finished: stays, however old
    _write_submit(journal, 5, 60, "unanswered")  # a lost answer: stays, however old
    _write_submit(journal, 6, 60, "absent")  # lost and never received, long ago: dropped
    before = _views(journal)
    size = journal.path.stat().st_size

    done = compaction.compact(journal, keep_days=30, now=NOW)

    live = Journal(journal.path)
    assert done.folded == 2
    assert {r["idempotency_key"] for r in read_live(live)} == {"key-3", "key-4", "key-5"}
    settled = [json.loads(line) for line in settled_path(journal.path).read_text().splitlines()]
    assert [r["idempotency_key"] for r in settled] == ["key-1", "key-2"]
    assert settled[0]["event"] == "finished"
    assert settled[0]["request"] == _request(1)  # the gallery's settings
    assert settled[0]["summary"] == {"quality": "low"}  # the history's columns
    assert settled[0]["submitted_at"] == _at(60, 30)  # the forecasts' start
    assert done.bytes_after < size
    assert _views(live) == before
    assert before["unanswered"] == ["key-5"]
    assert before["pending"] == ["key-4"]
    assert before["forecast"] == 30.0
    assert before["history"]["journaled"] == [True, True, True, True]
    assert before["history"]["estimate_credits_after_discount"] == [1.8] * 4

    again = compaction.compact(live, keep_days=30, now=NOW)  # nothing more to fold
    assert again.folded == 0
    assert again.bytes_after == again.bytes_before


def read_live(journal: Journal) -> list[dict]:
    return [json.loads(line) for line in journal.path.read_text().splitlines() if line]


def test_a_journal_of_real_submits_reads_the_same_after_compaction(sandbox, tenant, tmp_path):
    """Real generations from the sandbox: the history frame's journal columns, the gallery's
    requests and a lost answer's recovery are the same after their records are folded."""
    path = tmp_path / "journal.jsonl"
    client = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url,
                             cache_dir=tmp_path, journal=path, estimate=True)  # fmt: skip
    try:
        for n in range(3):
            gen = client.images.create(model="pixel-1", prompt=f"a lighthouse {n}", resolution="1k")
            client.generations.wait(gen, download=False)
        lost = {"model": "pixel-1", "prompt": "a lost answer", "resolution": "1k"}
        record = client._journal_record("attempt", "image", lost, "mg-lost-key", None, None)
        client.journal.append(record)
        client.journal.append({**record, "event": "unanswered"})
        frame = client.generations.to_dataframe(store=False).sort_values("id")
        requests = {gid: r["request"] for gid, r in client.journal.latest().items()}

        done = compaction.compact(client.journal, keep_days=0)

        assert done.folded == 3
        after = client.generations.to_dataframe(store=False).sort_values("id")
        journaled = [c for c in frame.columns if c.startswith(("estimate_", "refs_"))]
        journaled += ["journaled", "resolution", "key_id"]
        columns = [c for c in journaled if c in frame.columns]
        assert {"resolution", "estimate_credits_after_discount"} <= set(columns)
        assert frame["journaled"].all()
        assert frame[columns].equals(after[columns])
        assert {gid: r["request"] for gid, r in client.journal.latest().items()} == requests
        again = client.images.create(**lost)  # the identical request reuses the lost key
        assert again.idempotency_key == "mg-lost-key"
    finally:
        client.close()


def test_compaction_starts_past_its_size_once_per_process_on_its_own_thread(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    for n in range(40):
        _write_submit(journal, n, 90, "finished")
    size = journal.path.stat().st_size
    assert compaction.compact_soon(journal, 30, above_bytes=size) is None  # not past it yet
    thread = compaction.compact_soon(journal, 30, above_bytes=size // 2)
    assert thread is not None
    thread.join(30)
    assert journal.path.stat().st_size == 0
    for n in range(40, 80):
        _write_submit(journal, n, 90, "finished")
    assert compaction.compact_soon(Journal(journal.path), 30, above_bytes=1) is None  # once


WRITER = """
import sys
from mediagen.local._journal import Journal, make_record
journal = Journal(sys.argv[1])
for n in range(int(sys.argv[2])):
    journal.append(make_record("attempt", service="http://svc", key_id="key_x", kind="image",
                               request={"model": "pixel-1", "prompt": "p"},
                               idempotency_key=f"late-{n}"))
"""


def test_appends_from_another_process_during_compactions_are_never_lost(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    for n in range(300):
        _write_submit(journal, n, 90, "finished")
    appends = 3000
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(journal.path), str(appends)])
    replaced = 0
    try:
        while writer.poll() is None:  # replace the journal again and again while it is appended
            compaction.compact(Journal(journal.path), keep_days=30)
            replaced += 1
            _write_submit(journal, 1000 + replaced, 90, "finished")
    finally:
        assert writer.wait(120) == 0
    assert replaced > 10
    late = {r["idempotency_key"] for r in Journal(journal.path).records()}
    assert {f"late-{n}" for n in range(appends)} <= late


COMPACTOR = """
import sys
from mediagen.local import _compaction as compaction
from mediagen.local._journal import Journal
journal = Journal(sys.argv[1])
print("ready", flush=True)
compaction.compact(journal, keep_days=30)
print("done", flush=True)
"""
TRIALS = 10


def _state(journal: Journal) -> dict:
    return {
        "latest": _merged(journal),
        "unanswered": sorted(r["idempotency_key"] for r in journal.unanswered()),
        "pending": sorted(r["idempotency_key"] for r in journal.pending()),
    }


def test_kill_9_mid_compaction_loses_nothing(tmp_path):
    source = Journal(tmp_path / "source.jsonl")
    ends = ["finished", "finished", "finished", "pending", "unanswered"]
    for n in range(4000):  # several MB: a compaction takes long enough to be killed inside
        _write_submit(source, n, 90 if n % 3 else 2, ends[n % len(ends)])
    original = source.path.read_bytes()
    expected = _state(source)
    timing = tmp_path / "timing"
    timing.mkdir()
    (timing / "journal.jsonl").write_bytes(original)
    started = time.monotonic()
    compaction.compact(Journal(timing / "journal.jsonl"), keep_days=30)
    took = time.monotonic() - started
    rng = random.Random(5)
    outcomes = set()
    for trial in range(TRIALS):
        where = tmp_path / f"trial-{trial}"
        where.mkdir()
        path = where / "journal.jsonl"
        path.write_bytes(original)
        child = subprocess.Popen([sys.executable, "-c", COMPACTOR, str(path)],
                                 stdout=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0, took * 1.5))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(10)
        replaced = path.read_bytes() != original
        folded = settled_path(path).exists()
        outcomes.add((folded, replaced))
        journal = Journal(path)
        assert _state(journal) == expected, f"trial {trial}: the kill lost records"
        compaction.compact(journal, keep_days=30)  # the next compaction finishes the job
        assert _state(Journal(path)) == expected
        assert not list(where.glob(".journal.jsonl.part-*"))
    assert len(outcomes) > 1, f"every kill landed at the same point: {outcomes}"


@pytest.mark.parametrize("days", [-1.0])
def test_a_negative_age_is_refused(tmp_path, days):
    with pytest.raises(ValueError, match="keep_days"):
        compaction.compact(Journal(tmp_path / "journal.jsonl"), keep_days=days)
