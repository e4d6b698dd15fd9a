"""The request journal survives a crash mid-write: a torn last line never swallows the record
appended after it, and readers keep every complete record."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

from mediagen.local._journal import Journal, make_record

#: a request big enough that one record spans thousands of pages
REPEATS = 800_000  # about 17 MB: writing one takes long enough to be killed inside
RECORD_SIZE = len("a lighthouse at dusk, ") * REPEATS  # near enough: the prompt is most of it
TRIALS = 12

WRITER = """
import sys
from mediagen.local._journal import Journal, make_record
journal = Journal(sys.argv[1])
prompt = "a lighthouse at dusk, " * int(sys.argv[2])
n = 0
while True:
    n += 1
    journal.append(make_record("attempt", service="http://svc", key_id="key_x", kind="image",
                               request={"model": "pixel-1", "prompt": prompt},
                               idempotency_key=f"w-{n}"))
"""


def _record(key: str, prompt: str = "after the crash") -> dict:
    request = {"model": "pixel-1", "prompt": prompt}
    return make_record("attempt", service="http://svc", key_id="key_x", kind="image",
                       request=request, idempotency_key=key)  # fmt: skip


def _keys(journal: Journal) -> list[str]:
    return [r["idempotency_key"] for r in journal.records()]


def test_an_append_after_a_torn_tail_starts_on_a_fresh_line(tmp_path):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append(_record("before"))
    whole = (json.dumps(_record("torn", "a lighthouse " * 500)) + "\n").encode()
    with open(path, "ab") as handle:
        handle.write(whole[: len(whole) // 2])  # what a crash mid-write leaves
    journal.append(_record("after"))
    assert _keys(Journal(path)) == ["before", "after"]


def test_a_record_glued_onto_a_torn_line_by_an_older_writer_is_recovered(tmp_path):
    path = tmp_path / "journal.jsonl"
    whole = json.dumps(_record("torn"))
    glued = whole[: len(whole) // 2] + json.dumps(_record("glued")) + "\n"
    path.write_text(json.dumps(_record("before")) + "\n" + glued)
    assert _keys(Journal(path)) == ["before", "glued"]


def test_kill_9_mid_append_never_loses_the_next_record(tmp_path):
    rng = random.Random(11)
    torn_trials = 0
    for trial in range(TRIALS):
        path = tmp_path / f"journal-{trial}.jsonl"
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(REPEATS)])
        try:
            # Kill it as soon as the file grows past a point inside some record: the write of
            # that record is then most likely still going on.
            target = int((rng.randint(1, 3) + rng.random()) * RECORD_SIZE)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if path.exists() and path.stat().st_size >= target:
                    break
        finally:
            writer.send_signal(signal.SIGKILL)
            writer.wait(10)
        data = path.read_bytes()
        torn_trials += not data.endswith(b"\n")
        complete = data.count(b"\n")
        journal = Journal(path)
        journal.append(_record(f"after-{trial}"))
        keys = _keys(Journal(path))
        assert keys[-1] == f"after-{trial}", f"trial {trial}: the record after the crash was lost"
        assert len(keys) == complete + 1  # every complete record, plus the new one
        os.remove(path)
    assert torn_trials  # the crash really tore records (about half the kills do)
