"""A table run with an ``output_dir`` keeps one copy of each output: the one in ``output_dir``,
none in the client's cache (the real sandbox, over loopback)."""

from __future__ import annotations

import time
from pathlib import Path

import fsspec
import httpx
import pandas as pd

from mediagen.datasets import plan, row_key, run_rows
from mediagen.datasets._rows import save_outputs
from mediagen.provenance._sidecar import sidecar_of


def _cached(client) -> list[Path]:
    """Every file under the client's cache, the journal and the history store left out."""
    root = Path(client.cache_dir)
    kept = ("journal", "history")
    return [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(kept)]


def _media_requests(make_client):
    """A client on the sandbox and a list of the media (non-API) paths it fetches."""
    fetched: list[str] = []

    def hook(request: httpx.Request) -> None:
        if not request.url.path.startswith("/v1/"):
            fetched.append(request.url.path)

    http = httpx.Client(timeout=60, event_hooks={"request": [hook]})
    return make_client(http_client=http), fetched


def test_a_local_output_dir_holds_the_only_copy_and_a_re_run_restores_it(
    make_client, tenant, charges, tmp_path
):
    client, fetched = _media_requests(make_client)
    df = pd.DataFrame({"caption": ["a kite", "a boat", "a lamp"]})
    made = plan(df, client, model="pixel-1", prompt="{caption}", run_id="once")
    out = made.run(output_dir=tmp_path / "renders", progress=False)
    assert (out["status"] == "completed").all()
    files = [Path(p) for p in out["output"]]
    assert all(p.parent == tmp_path / "renders" for p in files)
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in files)
    assert len(fetched) == 3  # each output fetched once, straight into output_dir
    assert _cached(client) == []
    assert sorted(p.name for p in (tmp_path / "renders").iterdir()) == sorted(
        [p.name for p in files]
        + [sidecar_of(p).name for p in files]
        + ["results.parquet", "run-manifest.json"]
    )  # no temporary file left beside them, each output's content credentials beside it
    paid = charges(tenant)[1]

    files[1].unlink()
    again = made.run(output_dir=tmp_path / "renders", progress=False)
    assert list(again["generation_id"]) == list(out["generation_id"])
    assert list(again["output"]) == list(out["output"])
    assert charges(tenant)[1] == paid  # read back, not paid twice
    assert files[1].read_bytes()[:4] == b"\x89PNG"
    assert _cached(client) == []


def test_an_output_already_in_the_cache_is_copied_from_it(make_client, tmp_path):
    client, fetched = _media_requests(make_client)
    requests = [{"model": "pixel-1", "prompt": f"a red fox, take {i}"} for i in range(2)]
    rows = pd.DataFrame(
        {"request": requests, "key": [row_key("cached", i, r) for i, r in enumerate(requests)]}
    )
    first = run_rows(client, rows, output_dir=None)  # into the cache
    assert len(fetched) == 2
    out = run_rows(client, rows, output_dir=tmp_path / "out")
    assert len(fetched) == 2  # copied from the cache, nothing fetched again
    for cached, saved in zip(first["output"], out["output"], strict=True):
        assert Path(saved).parent == tmp_path / "out"
        assert Path(saved).read_bytes() == Path(cached).read_bytes()


def test_an_expired_url_is_refreshed_and_the_output_saved(sandbox, client, tmp_path):
    with sandbox.admin.config_changed(output_url_ttl_seconds=1):
        gen = client.images.create(model="pixel-1", prompt="a slow boat")
        gen = client.generations.wait(gen, timeout=30, download=False)
    time.sleep(1.2)
    saved = save_outputs(client, gen, str(tmp_path / "late"))
    assert saved is not None
    assert Path(saved).parent == tmp_path / "late"
    assert Path(saved).read_bytes()[:4] == b"\x89PNG"
    assert _cached(client) == []


def test_a_url_output_dir_leaves_no_copy_in_the_cache(client):
    df = pd.DataFrame({"caption": ["a kite at dusk", "a boat at dawn"]})
    out = df.mediagen.generate(
        client, model="pixel-1", prompt="{caption}", output_dir="memory://once", progress=False
    )
    fs = fsspec.filesystem("memory")
    assert all(fs.cat(o)[:4] == b"\x89PNG" for o in out["output"])
    assert _cached(client) == []
    assert not any(p.is_dir() for p in Path(client.cache_dir).glob(".table-*"))


def test_each_output_is_named_after_its_asset_id_local_and_remote_alike(
    make_client, tenant, tmp_path
):
    """The name the service suggests holds 8 characters of the generation id: at 100,000 rows
    two rows are likely to share one, and the second file would replace the first."""
    client = make_client()
    df = pd.DataFrame({"caption": ["a kite", "a boat"]})
    made = plan(df, client, model="pixel-1", prompt="{caption}", run_id="names")
    local = made.run(output_dir=tmp_path / "renders", progress=False)
    remote = made.run(output_dir="memory://names", progress=False)
    rows = zip(local["generation_id"], local["output"], remote["output"], strict=True)
    for gen_id, here, there in rows:
        [output] = client.generations.get(gen_id).outputs
        assert output.asset_id
        assert Path(here).name == Path(there).name == client._cache.path_for(output).name
        assert Path(here).stem == output.asset_id
        assert Path(here).name != output.filename  # not the service's short name
