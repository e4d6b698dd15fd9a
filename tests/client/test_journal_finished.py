"""``Journal.is_finished``: a generation the journal has seen finished is known as such, from
the files (journal and settled) and from this process's own appends, and no other is; the
client writes one ``finished`` record per generation however often it sees it finished."""

from __future__ import annotations

import json

from client_helpers import example

from mediagen.local._journal import Journal, make_record, settled_path

COMMON = {"service": "http://svc", "key_id": "key_x", "kind": "image"}


def _finished(gid: str) -> dict:
    generation = {"id": gid, "status": "completed", "credits_charged": 1.0}
    return make_record("finished", generation=generation, idempotency_key=f"k-{gid}", **COMMON)


def _submitted(gid: str) -> dict:
    generation = {"id": gid, "status": "pending"}
    return make_record("submitted", generation=generation, idempotency_key=f"k-{gid}", **COMMON)


def test_finished_ids_are_known_from_the_files_and_from_appends(tmp_path):
    path = tmp_path / "journal.jsonl"
    settled_path(path).write_text(json.dumps(_finished("gen-settled")) + "\n")
    first = Journal(path)
    first.append(_finished("gen-a"))
    first.append(_submitted("gen-b"))
    journal = Journal(path)  # another process: reads both files on first use
    assert journal.is_finished("gen-settled")
    assert journal.is_finished("gen-a")
    assert not journal.is_finished("gen-b")
    assert not journal.is_finished("gen-A")
    journal.append(_finished("gen-b"))
    assert journal.is_finished("gen-b")
    assert not journal.is_finished("gen-c")
    many = [f"{n:08x}-0000-4000-8000-000000000000" for n in range(5000)]
    for gid in many[::2]:
        journal.append(_finished(gid))
    assert [journal.is_finished(gid) for gid in many] == [n % 2 == 0 for n in range(5000)]


def test_a_generation_seen_finished_twice_is_journaled_finished_once(make_client, catalog):
    client = make_client()
    gen = client.images.create(**example(catalog, "pixel-1"))
    client.generations.wait(gen, timeout=30, download=False)
    client.generations.wait(gen.id, timeout=30, download=False)
    again = make_client()  # a new process's client: the journal file says it finished
    again.generations.wait(gen.id, timeout=30, download=False)
    finished = [
        r
        for r in client.journal.records()
        if r.get("event") == "finished" and r.get("generation_id") == gen.id
    ]
    assert len(finished) == 1
