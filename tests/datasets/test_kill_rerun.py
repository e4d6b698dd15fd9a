"""kill -9 of a process in the middle of a table run, then the same call: each row done once,
and the ledger charges each row once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd

from mediagen.datasets import generate

ROWS = 12

CHILD = textwrap.dedent(
    """
    import sys
    import pandas as pd
    import mediagen

    client = mediagen.Client(poll_interval=(0.05, 0.2), cache_dir=sys.argv[1])
    df = pd.DataFrame({"caption": [f"item {i} [[slow:3]]" for i in range(ROWS)]})
    print("starting", flush=True)
    df.mediagen.generate(client, model="pixel-1", prompt="{caption}", run_id="killed-run",
                         concurrency=4)
    print("finished", flush=True)
    """
).replace("ROWS", str(ROWS))


def test_kill_9_mid_run_then_the_same_call_pays_each_row_once(
    sandbox, tenant, client, charges, tmp_path
):
    env = {**os.environ, "MEDIAGEN_BASE_URL": sandbox.base_url, "MEDIAGEN_API_KEY": tenant.api_key}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "child-cache")],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "starting"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # some rows submitted, none finished yet
        entries = sandbox.admin.ledger(tenant.org_id)["entries"]
        if sum(e["kind"] == "reserve" for e in entries) >= 4:
            break
        time.sleep(0.05)
    assert not any(e["kind"] == "charge" for e in entries)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    df = pd.DataFrame({"caption": [f"item {i} [[slow:3]]" for i in range(ROWS)]})
    out = generate(df, client, model="pixel-1", prompt="{caption}", run_id="killed-run")
    assert (out["status"] == "completed").all()
    assert out["generation_id"].is_unique
    credits, count = charges(tenant)
    assert set(count) == set(out["generation_id"])
    assert set(count.values()) == {1}
    assert sum(credits.values()) == out["credits"].sum()
