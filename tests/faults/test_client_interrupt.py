"""Ctrl-C during ``wait()`` or a submit (a real SIGINT to a real process) ends with a short
message that names the job and how to resume, not a traceback through the client's insides."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from client_faults import Relay, example_request, reserves, submits

import mediagen
from process_helpers import sigint_default

WAITER = """
import os, sys
import mediagen
client = mediagen.Client(api_key=os.environ["MEDIAGEN_API_KEY"], cache_dir=sys.argv[1],
                         poll_interval=(0.1, 0.2))
gen = client.images.create(model="pixel-1", prompt="a lighthouse [[slow:120]]")
client.generations.wait(gen, progress=lambda g: print("polled", g.id, flush=True))
"""

SUBMITTER = """
import json, os, sys
import mediagen
client = mediagen.Client(api_key=os.environ["MEDIAGEN_API_KEY"], cache_dir=sys.argv[1])
client.images.create(**json.loads(sys.argv[2]))
"""


def _run_until(script: str, args: list[str], env: dict, ready) -> subprocess.CompletedProcess:
    """Start ``script``; once ``ready(first stdout line)`` send SIGINT; the finished process."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, **env}, text=True, preexec_fn=sigint_default,
    )  # fmt: skip
    try:
        ready(process)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _assert_short(stderr: str) -> None:
    """The caller's line and the public method that raised: no flow, driver or httpx frames."""
    frames = [line for line in stderr.splitlines() if line.startswith('  File "')]
    inside = [f for f in frames if "mediagen/client" in f or "httpx" in f]
    assert len(frames) <= 2, stderr
    assert len(inside) <= 1, stderr
    assert len(stderr.splitlines()) <= 8, stderr
    assert "mediagen.WaitInterrupted" in stderr or "mediagen.SubmitInterrupted" in stderr


def test_interrupting_wait_names_the_job_and_how_to_resume(sandbox, tenant, tmp_path):
    seen: list[str] = []

    def first_poll(process: subprocess.Popen) -> None:
        seen.append(process.stdout.readline())  # the wait is polling now

    env = {"MEDIAGEN_BASE_URL": sandbox.base_url, "MEDIAGEN_API_KEY": tenant.api_key}
    done = _run_until(WAITER, [str(tmp_path)], env, first_poll)
    gen_id = seen[0].split()[1]
    assert done.returncode != 0
    assert "WaitInterrupted" in done.stderr
    assert gen_id in done.stderr
    assert f"client.generations.wait('{gen_id}')" in done.stderr
    assert "not resubmitted" in done.stderr
    _assert_short(done.stderr)
    # The job keeps running at the service; nothing else was made.
    listed = httpx.get(f"{sandbox.base_url}/v1/generations", headers=tenant.headers).json()
    assert [(g["id"], g["status"]) for g in listed["data"]] == [(gen_id, "pending")]


def test_interrupting_a_submit_names_its_key_and_the_rerun_charges_once(sandbox, tenant, tmp_path):
    relay = Relay(sandbox.base_url, drop=submits)  # the answer never comes back
    request = example_request(sandbox, tenant, "pixel-1")

    def submitted(process: subprocess.Popen) -> None:
        deadline = time.monotonic() + 60
        while relay.dropped == 0 and time.monotonic() < deadline:
            time.sleep(0.01)

    env = {"MEDIAGEN_BASE_URL": relay.url, "MEDIAGEN_API_KEY": tenant.api_key}
    client = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path)
    try:
        done = _run_until(SUBMITTER, [str(tmp_path), json.dumps(request)], env, submitted)
        assert done.returncode != 0
        assert "SubmitInterrupted" in done.stderr
        assert "recover()" in done.stderr
        _assert_short(done.stderr)
        assert len(reserves(sandbox, tenant.org_id)) == 1  # it did reach the service
        # Running the same call again (same machine and service, answers back) gets that job.
        relay.drop = lambda r: False
        gen = client.images.create(**request)
    finally:
        client.close()
        relay.close()
    assert f"'{gen.idempotency_key}'" in done.stderr
    assert len(reserves(sandbox, tenant.org_id)) == 1


@pytest.mark.parametrize("status", ["pending", "completed"])
def test_the_interruption_says_what_happened_to_the_job(status):
    gen = mediagen.Generation.from_dict(
        {"id": "g-1", "type": "image", "status": status, "model": "m", "prompt": "p"}
    )
    text = str(mediagen.WaitInterrupted("g-1", gen))
    assert ("keeps running" in text) == (status == "pending")
    assert "client.generations.wait('g-1')" in text


WATCHER = """
import os, sys
import mediagen
client = mediagen.Client(api_key=os.environ["MEDIAGEN_API_KEY"], cache_dir=sys.argv[1],
                         poll_interval=(0.1, 0.2))
gens = [client.images.create(model="pixel-1", prompt=f"lighthouse {i} [[slow:120]]")
        for i in range(3)]
print(" ".join(g.id for g in gens), flush=True)
for done in client.generations.watch(gens, on_update=lambda g: print("polled", flush=True)):
    pass
"""


def test_interrupting_watch_names_every_job_still_running(sandbox, tenant, tmp_path):
    seen: list[str] = []

    def polling(process: subprocess.Popen) -> None:
        seen.append(process.stdout.readline())  # the ids
        process.stdout.readline()  # the first poll

    env = {"MEDIAGEN_BASE_URL": sandbox.base_url, "MEDIAGEN_API_KEY": tenant.api_key}
    done = _run_until(WATCHER, [str(tmp_path)], env, polling)
    ids = seen[0].split()
    assert done.returncode != 0
    assert "WaitInterrupted" in done.stderr
    assert all(gen_id in done.stderr for gen_id in ids)
    assert "not resubmitted" in done.stderr
    _assert_short(done.stderr)
