"""One key, one pace on this machine: the processes that use a key share its budget, learn the
limit together, hand the pace to the next run, and a process killed while it held budget
gives it back within a lease (real processes, the real sandbox, a private runtime directory)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

import mediagen
from mediagen.client._requests import KeyGate
from mediagen.local import _pace

#: a process of the key: plans and runs ``rows`` rows (argv: rows, rate or "-", run id, cache;
#: then, to start together, a folder and how many processes meet there)
TABLE_RUN = textwrap.dedent(
    """
    import json, pathlib, sys, time
    import pandas as pd
    import mediagen
    from mediagen.datasets import plan

    rows, rate, run_id, cache = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    client = mediagen.Client(rate_limit=None if rate == "-" else float(rate), cache_dir=cache,
                             poll_interval=(0.05, 0.2))
    if len(sys.argv) > 5:  # a loaded machine starts processes seconds apart: wait for all
        meeting, count = pathlib.Path(sys.argv[5]), int(sys.argv[6])
        (meeting / run_id).touch()
        deadline = time.time() + 60
        while len(list(meeting.iterdir())) < count and time.time() < deadline:
            time.sleep(0.01)
    start = time.time()
    frame = pd.DataFrame({"caption": [f"a kite {i} of {run_id}" for i in range(rows)]})
    made = plan(frame, client, model="pixel-1", prompt="{caption}", run_id=run_id)
    out = made.run(concurrency=8, progress=False)
    print(json.dumps({"completed": int((out["status"] == "completed").sum()),
                      "shared": client._gate.shared, "start": start, "end": time.time()}))
    """
)


def _env(sandbox, tenant, runtime: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIAGEN_")}
    env.update(
        MEDIAGEN_API_KEY=tenant.api_key,
        MEDIAGEN_BASE_URL=sandbox.base_url,
        MEDIAGEN_RUNTIME_DIR=str(runtime),
        **extra,
    )
    return env


def _run_together(sandbox, tenant, tmp_path, rows: int, rate: str, **extra: str) -> list[dict]:
    """Two processes of the key, running from the same moment; what each printed."""
    runtime = tmp_path / "runtime"
    meeting = tmp_path / "meeting"
    meeting.mkdir(parents=True)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                TABLE_RUN,
                str(rows),
                rate,
                f"{tmp_path.name}-{n}",
                str(tmp_path / f"cache{n}"),
                str(meeting),
                "2",
            ],
            env=_env(sandbox, tenant, runtime, **extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    found = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        found.append(json.loads(out.strip().splitlines()[-1]))
    return found


def _share_429(sandbox, tenant, before) -> tuple[float, int]:
    after = sandbox.admin.key_requests(tenant.key_id)
    passed, limited = after.passed - before.passed, after.limited - before.limited
    return limited / max(1, passed + limited), passed + limited


def _rate(sandbox, tenant, before, results) -> float:
    """Requests per second the service got from the processes together, while they ran."""
    after = sandbox.admin.key_requests(tenant.key_id)
    sent = after.passed + after.limited - before.passed - before.limited
    return sent / (max(r["end"] for r in results) - min(r["start"] for r in results))


def test_two_processes_told_the_limit_send_it_together_not_each(sandbox, tenant_factory,
                                                                tmp_path):  # fmt: skip
    shared_tenant, alone_tenant = tenant_factory(balance=10_000), tenant_factory(balance=10_000)
    limit = 10.0
    with sandbox.admin.config_changed(rate_limit_per_second=1000, rate_limit_burst=1000):
        before = sandbox.admin.key_requests(shared_tenant.key_id)
        results = _run_together(sandbox, shared_tenant, tmp_path / "shared", 20, str(limit))
        shared = _rate(sandbox, shared_tenant, before, results)
        # the same, each process on its own (as before the pace was shared)
        before = sandbox.admin.key_requests(alone_tenant.key_id)
        alone_results = _run_together(sandbox, alone_tenant, tmp_path / "alone", 20, str(limit),
                                      MEDIAGEN_SHARED_PACE="0")  # fmt: skip
        alone = _rate(sandbox, alone_tenant, before, alone_results)
    assert [r["completed"] for r in results] == [20, 20]
    assert all(r["shared"] for r in results)
    # Each alone sends up to the limit: near twice it together on an idle machine (1.88x),
    # less when the machine is loaded and the processes are slow (1.21x to 1.38x seen under
    # CI). So the control is held to the shared run of the same moment: over the limit, and
    # clearly more than the processes send when they share.
    together = f"together: {shared / limit:.2f} of the limit"
    assert alone > limit, f"alone: {alone / limit:.2f} of the limit, proves nothing"
    assert alone > 1.15 * shared, f"alone: {alone / limit:.2f} of the limit; {together}"
    assert shared <= 1.1 * limit, together


def test_two_processes_learn_the_limit_together_and_pay_each_row_once(sandbox, tenant_factory,
                                                                      tmp_path):  # fmt: skip
    tenant = tenant_factory(balance=10_000)
    with sandbox.admin.key_rate_limited(tenant.key_id, 10, burst=2):
        before = sandbox.admin.key_requests(tenant.key_id)
        results = _run_together(sandbox, tenant, tmp_path, 30, "-")
        share, sent = _share_429(sandbox, tenant, before)
    assert [r["completed"] for r in results] == [30, 30]
    assert share > 0, "the limit was never met: this test proves nothing"
    # 3 to 6% of the requests were 429s on an idle machine (learning together or each alone:
    # the first requests meet the limit before anything is known of it), 17.5% once in a CI
    # run of the whole suite, where the sandbox is starved and handles requests that arrived
    # spaced out all at once; a fixed concurrency, which learns nothing, got 26 to 31%
    assert share <= 0.25, f"{share:.1%} of {sent} requests were 429s"
    charges = Counter(
        e["generation_id"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]
        if e["kind"] == "charge"
    )  # fmt: skip
    assert len(charges) == 60
    assert set(charges.values()) == {1}


HOLDER = textwrap.dedent(
    """
    import sys, threading, time
    from mediagen.client._requests import KeyGate
    from mediagen.local._pace import SharedPace

    gate = KeyGate(rate=float(sys.argv[2]), clock=time.time, store=SharedPace(sys.argv[1]))

    def hold():
        while True:  # reserve a slot, wait for it, reserve the next: budget always held
            delay, _ = gate.reserve()
            time.sleep(delay)

    for _ in range(40):
        threading.Thread(target=hold, daemon=True).start()
    print("holding", flush=True)
    time.sleep(600)
    """
)


def test_a_process_killed_holding_budget_gives_it_back_within_a_lease(tmp_path):
    path, rate = tmp_path / _pace.pace_file_name("http://svc", "key_abc"), 5.0
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(rate)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        store = _pace.SharedPace(path)
        deadline = time.time() + 30
        while store.read().next_slot - time.time() < 0.5 * KeyGate.LEASE:
            assert time.time() < deadline, "the holder never reserved ahead"
            time.sleep(0.05)
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    killed = time.time()
    gate = KeyGate(rate=rate, clock=time.time, store=_pace.SharedPace(path))
    while True:
        delay, reserved = gate.reserve()
        if reserved:
            break
        time.sleep(delay)
    # 40 threads at 5/s would hold 8 s of the key's budget without the lease
    assert (time.time() + delay - killed) <= 1.25 * KeyGate.LEASE
    # then the key's whole pace is this process's
    time.sleep(delay)
    waits = [gate.reserve()[0] for _ in range(5)]
    assert waits[-1] - waits[0] == pytest.approx(4 / rate, rel=0.05)


def test_the_learned_pace_is_kept_for_the_next_run_and_stale_slots_are_not(tmp_path):
    path = tmp_path / _pace.pace_file_name("http://svc", "key_abc")
    clock = [1_000_000.0]
    gate = KeyGate(clock=lambda: clock[0], store=_pace.SharedPace(path))
    for _ in range(40):
        clock[0] += 0.05
        gate.answered()
    gate.penalize(1.0)
    learned = gate.pace
    assert learned == pytest.approx(KeyGate.CUT * 20, rel=0.1)
    # another process of the same key, at once: the same pace and the same holds
    other = KeyGate(clock=lambda: clock[0], store=_pace.SharedPace(path))
    assert other.pace == learned
    assert other.acquire() == pytest.approx(1.0, abs=0.06)  # the Retry-After, key-wide
    # the next run, an hour later: starts from the pace learned, and nothing else of it
    clock[0] += 3600
    later = KeyGate(clock=lambda: clock[0], store=_pace.SharedPace(path))
    assert later.pace == learned
    assert later.acquire() == 0
    assert later.blocked_for == 0


def test_the_key_is_never_in_the_shared_state_only_its_fingerprint(sandbox, tenant, tmp_path,
                                                                   monkeypatch):  # fmt: skip
    runtime = tmp_path / "runtime"
    monkeypatch.setenv(_pace.ENV_RUNTIME_DIR, str(runtime))
    monkeypatch.setattr("mediagen.client._requests._GATES", {})
    limited = sandbox.admin.key_rate_limited(tenant.key_id, 5, burst=1)
    made = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url,
                           cache_dir=tmp_path / "cache")  # fmt: skip
    with limited, made as client:
        for _ in range(4):  # a 429 or two: the pace is learned and written
            client.credits.get()
        assert client._gate.shared
        assert client._gate.learned is not None
        fingerprint = client._config.key_fingerprint
        assert tenant.api_key not in repr(vars(client._gate))
        assert tenant.api_key not in repr(vars(client._gate.store))
    files = list(runtime.iterdir())
    assert [f.name for f in files] == [_pace.pace_file_name(sandbox.base_url, fingerprint)]
    assert fingerprint in files[0].name
    key = tenant.api_key.encode()
    for f in files:
        assert tenant.api_key not in f.name
        data = f.read_bytes()
        assert key not in data
        assert sandbox.base_url.encode() not in data  # numbers only
    assert os.stat(runtime).st_mode & 0o077 == 0


def test_a_runtime_directory_others_can_write_to_is_not_used(tmp_path, monkeypatch):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    monkeypatch.setenv(_pace.ENV_RUNTIME_DIR, str(open_dir))
    assert not _pace.pace_store("http://svc", "key_abc").shared
    monkeypatch.setenv(_pace.ENV_RUNTIME_DIR, str(tmp_path / "mine"))
    assert _pace.pace_store("http://svc", "key_abc").shared
    monkeypatch.setenv(_pace.ENV_SHARED, "0")
    assert not _pace.pace_store("http://svc", "key_abc").shared


def test_the_generations_panel_beside_a_table_run_keeps_the_key_under_its_limit(
    sandbox, tenant_factory, tmp_path, monkeypatch
):
    """JupyterLab's poller, with the Generations panel open, and a table run in a kernel's
    process use one key: they share the machine's pace for it, so the service sees one
    client of the key, not two hammering it; the panel still follows the table's jobs."""
    import asyncio

    import httpx

    from mediagen.jupyter_server._feed import Feed, RealClock

    tenant = tenant_factory(balance=10_000)
    runtime = tmp_path / "runtime"
    monkeypatch.setenv(_pace.ENV_RUNTIME_DIR, str(runtime))
    monkeypatch.setenv("MEDIAGEN_API_KEY", tenant.api_key)
    monkeypatch.setenv("MEDIAGEN_BASE_URL", sandbox.base_url)
    monkeypatch.setattr("mediagen.client._requests._GATES", {})

    panel_answers: Counter[int] = Counter()

    async def count(response: httpx.Response) -> None:
        panel_answers[response.status_code] += 1

    def client_of_the_server(http: httpx.AsyncClient) -> mediagen.AsyncClient:
        http.event_hooks["response"].append(count)
        return mediagen.AsyncClient(http_client=http, journal=False)  # as JupyterLab's

    async def side_by_side() -> tuple[Feed, dict, str]:
        feed = Feed(client_of_the_server, clock=RealClock())  # the panel's own intervals
        table = await asyncio.create_subprocess_exec(
            sys.executable, "-c", TABLE_RUN, "30", "-", "beside", str(tmp_path / "cache"),
            env=_env(sandbox, tenant, runtime), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        answered = asyncio.ensure_future(table.communicate())
        while not answered.done():
            feed.subscribe("page", "all")  # the page's long-poll keeps the panel live
            await asyncio.wait({answered}, timeout=0.5)
        await feed.stop()
        out, err = answered.result()
        assert table.returncode == 0, err.decode()[-2000:]
        return feed, json.loads(out.decode().strip().splitlines()[-1]), err.decode()

    with sandbox.admin.key_rate_limited(tenant.key_id, 8, burst=2):
        before = sandbox.admin.key_requests(tenant.key_id)
        feed, result, _ = asyncio.run(side_by_side())
        share, sent = _share_429(sandbox, tenant, before)
    assert result["completed"] == 30
    assert result["shared"], "the table run did not join the machine's pace"
    followed = [g for g in feed.generations.values() if g.prompt.endswith(" of beside")]
    assert followed, "the panel did not follow the table's jobs"
    # one budget: the panel's requests were decided in the very file the table's process used
    from mediagen.client._requests import _GATES

    panel_files = {getattr(gate.store, "path", None) for gate in _GATES.values()}
    table_files = set(runtime.rglob("pace-*"))
    assert len(table_files) == 1, table_files
    assert panel_files == table_files, "the panel kept a budget of its own"
    assert panel_answers[200] >= 3, "the panel sent (almost) nothing: proves nothing"
    assert share <= 0.15, f"{share:.1%} of {sent} requests were 429s"
    charges = Counter(
        e["generation_id"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]
        if e["kind"] == "charge"
    )  # fmt: skip
    assert sorted(charges.values()) == [1] * 30
