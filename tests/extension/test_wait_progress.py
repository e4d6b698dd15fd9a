"""A wait's progress bar: never full while the job is pending, filling towards the time this
model usually takes here (from the journal), and saying that time."""

from __future__ import annotations

import time

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import mediagen
from mediagen.display._progress import Progress, expected_seconds, typical_seconds
from mediagen.local._journal import Journal


def test_a_pending_wait_without_history_draws_an_indeterminate_bar_not_a_full_one():
    assert InteractiveShell.instance() is not None
    with capture_output():
        bar = Progress("Generation vidra-2", mode="widget")
        bar.update(message="pending · vidra-2")
        # max 0: the view draws a <progress> without a value, which the browser animates
        assert (bar._widget.max, bar._widget.value) == (0, 0), "a full bar reads as done"
        assert bar._widget.line.startswith("pending · vidra-2 · ")
        assert "usually" not in bar._widget.line
        bar.close()


def test_a_pending_wait_fills_towards_the_expected_time_but_never_to_the_end():
    with capture_output():
        bar = Progress("Generation vidra-2", mode="widget", expected=0.2)
        bar.update(message="pending · vidra-2")
        early = bar._widget.value
        assert bar._widget.max == Progress.WAIT_SCALE
        assert early < bar._widget.max // 2
        assert "(usually ~0.2 s)" in bar._widget.line
        deadline = time.monotonic() + 10
        while bar.elapsed < 0.4 and time.monotonic() < deadline:
            time.sleep(0.05)
        bar.update(message="pending · vidra-2")
        assert early < bar._widget.value < bar._widget.max
        bar.close()


def test_expected_time_is_the_median_of_this_models_finished_jobs_in_the_journal(
    sandbox, tenant, tmp_path
):
    client = mediagen.Client(
        api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path, poll_interval=0.05
    )
    try:
        assert expected_seconds(client.journal, "pixel-1") is None
        for _ in range(3):
            client.images.create(model="pixel-1", prompt="a kite [[slow:0.3]]").wait()
        failed = client.images.create(model="pixel-pro", prompt="x [[fail:safety]]").wait()
        assert failed.status == "failed"
    finally:
        client.close()
    expected = expected_seconds(Journal(tmp_path / "journal.jsonl"), "pixel-1")
    assert expected is not None
    assert 0.3 <= expected < 10
    assert expected_seconds(client.journal, "pixel-pro") is None, "failures do not count"
    assert expected_seconds(client.journal, "vidra-2") is None


def test_typical_seconds_takes_the_median_and_ignores_nonsense():
    spans = [
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:10Z"),
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:20Z"),
        ("2026-01-01T00:00:00Z", "2026-01-01T00:10:00Z"),
        ("2026-01-01T00:00:05Z", "2026-01-01T00:00:00Z"),  # ends before it starts
        (None, "2026-01-01T00:00:00Z"),
    ]
    assert typical_seconds(spans) == 20
    assert typical_seconds([]) is None


def test_a_plain_client_wait_says_how_long_this_model_usually_takes(shell, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDIAGEN_CACHE_DIR", str(tmp_path))  # the default cache and journal
    assert shell.run("import mediagen\nclient = mediagen.Client()").success
    make = 'client.images.create(model="pixel-1", prompt="a kite [[slow:0.3]]")'
    first = shell.run(f"client.generations.wait({make}, poll_interval=0.1)")
    assert first.success, first.text
    assert "usually" not in first.stderr, "no history yet: no expectation"
    second = shell.run(f"client.generations.wait({make}, poll_interval=0.1)")
    assert second.success, second.text
    assert "(usually ~0." in second.stderr


def test_the_journal_is_read_once_per_change_not_once_per_card(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")

    def record(event, gid, at, status="pending"):
        journal.append(
            {"event": event, "generation_id": gid, "model": "vidra-2", "at": at, "status": status}
        )

    record("submitted", "g1", "2026-01-01T00:00:00Z")
    record("finished", "g1", "2026-01-01T00:00:30Z", "completed")
    reads = []
    original = journal.iter_records

    def counting():
        reads.append(1)
        return original()

    journal.iter_records = counting
    assert [expected_seconds(journal, "vidra-2") for _ in range(5)] == [30.0] * 5
    assert len(reads) == 1
    record("submitted", "g2", "2026-01-01T00:01:00Z")
    record("finished", "g2", "2026-01-01T00:01:50Z", "completed")
    assert expected_seconds(journal, "vidra-2") == 40.0  # the median of 30 and 50
    assert len(reads) == 2
