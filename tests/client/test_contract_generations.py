"""Submit, wait, list, save, watch and resume against the real sandbox."""

from __future__ import annotations

import time

import pytest
from client_helpers import Recorder, example, fill_placeholders, kind_of

import mediagen

RESOURCES = {"image": "images", "video": "videos", "audio": "audio"}
MAGIC = {
    "image/png": (b"\x89PNG",),
    "audio/wav": (b"RIFF",),
    "audio/mpeg": (b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"),
    "video/mp4": (b"ftyp",),
}


def _create(client, catalog, request, **options):
    resource = getattr(client, RESOURCES[kind_of(catalog, request["model"])])
    return resource.create(**request, **options)


@pytest.mark.parametrize(
    ("model", "mode"),
    [("pixel-1", None), ("vidra-2", "text_to_video"), ("voxa-tts", None), ("tunesmith", None)],
)
def test_each_kind_submits_waits_downloads_and_charges_its_estimate(
    client, catalog, tmp_path, model, mode
):
    request = example(catalog, model, mode)
    quote = client.models.estimate_request(request)
    gen = _create(client, catalog, request)
    assert gen.status == "pending"
    assert gen.outputs == []
    assert gen.credits_charged is None
    assert gen.idempotency_key  # the client made one
    seen = []
    done = client.generations.wait(gen, timeout=60, progress=seen.append)
    assert done.status == "completed", done.error
    assert done.credits_charged == quote.credits_after_discount
    assert seen[-1].status == "completed"
    assert done.created_at.tzinfo is not None
    assert done.completed_at >= done.created_at
    output = done.outputs[0]
    assert output.local_path is not None  # downloaded as soon as wait saw it completed
    head = output.local_path.read_bytes()[:12]
    assert any(magic in head for magic in MAGIC[output.content_type.split(";")[0]])
    saved = output.save(tmp_path / "out")
    assert saved.parent == tmp_path / "out"
    assert saved.read_bytes() == output.local_path.read_bytes()


def test_references_accept_ids_assets_outputs_and_local_paths(client, catalog, media):
    asset = client.uploads.upload(media["image"])
    first = client.images.create(**example(catalog, "pixel-1"))
    first = client.generations.wait(first, timeout=30)
    request = example(catalog, "vidra-2", "reference_to_video")
    request["reference_images"] = [asset, first.outputs[0], str(media["image_2"])]
    request["reference_names"] = {"reference_images": ["a", "b", "c"]}
    gen = client.videos.create(**request)
    sent = client.generations.get(gen.id)
    assert sent.status in ("pending", "completed")
    record = client.journal.latest()[gen.id]
    refs = record["request"]["reference_images"]
    assert refs[0] == asset.asset_id
    assert refs[1] == first.outputs[0].asset_id
    assert refs[2].startswith("asset_")
    assert refs[2] not in refs[:2]


def test_chaining_an_output_into_an_extend(client, catalog, assets):
    request = fill_placeholders(example(catalog, "vidra-2", "extend"), assets)
    gen = client.generations.wait(client.videos.create(**request), timeout=60)
    assert gen.status == "completed", gen.error


def test_list_follows_cursors_and_filters(sandbox, tenant, client):
    sandbox.admin.seed_generations(tenant.member_id, 45, org_id=tenant.org_id, seed=7)
    everything = list(client.generations.list(limit=10))
    assert len(everything) == 45
    assert len({g.id for g in everything}) == 45
    times = [g.created_at for g in everything]
    assert times == sorted(times, reverse=True)
    failed = list(client.generations.list(status="failed", limit=7))
    assert failed
    assert all(g.status == "failed" for g in failed)
    assert len(failed) == sum(g.status == "failed" for g in everything)
    assert len(list(client.generations.list(max_items=12, limit=5))) == 12


def test_models_estimate_and_credits(client, catalog):
    models = client.models.list()
    assert {m.id for m in models} == set(catalog)
    videos = client.models.list(type="video")
    assert videos
    assert all(m.type == "video" for m in videos)
    entry = client.models.get("vidra-2")
    assert "text_to_video" in entry.mode_ids
    assert entry.example("text_to_video")["model"] == "vidra-2"
    quote = client.models.estimate("vidra-2", mode="text_to_video", tier="720p", duration_seconds=5)
    assert quote.allowed
    assert quote.can_afford
    assert quote.credits > 0
    before = client.credits.get().balance
    gen = client.videos.create(**example(catalog, "vidra-2", "text_to_video"))
    gen = client.generations.wait(gen, timeout=60, download=False)
    assert client.credits.get().balance == round(before - gen.credits_charged, 2)


def test_a_failed_generation_is_returned_refunded_and_raised_on_request(
    sandbox, tenant, client, catalog
):
    request = example(catalog, "pixel-1")
    request["prompt"] += " [[fail:safety]]"
    before = client.credits.get().balance
    gen = client.generations.wait(client.images.create(**request), timeout=30)
    assert gen.status == "failed"
    assert gen.error.code == "safety"
    assert gen.credits_charged in (None, 0)
    assert client.credits.get().balance == before
    with pytest.raises(mediagen.GenerationFailedError, match="safety"):
        gen.raise_for_error()
    kinds = [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]]
    assert kinds.count("reserve") == 1
    assert kinds.count("refund") == 1


def test_wait_timeout_names_the_generation_and_never_resubmits(make_client, catalog):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    request = example(catalog, "pixel-1")
    request["prompt"] += " [[slow:30]]"
    gen = client.images.create(**request)
    with pytest.raises(mediagen.WaitTimeoutError) as caught:
        client.generations.wait(gen, timeout=0.3)
    # it gave up at its deadline, not when the 30 s job finished
    assert client.generations.get(gen.id).status == "pending"
    message = str(caught.value)
    assert gen.id in message
    assert "may still complete" in message
    assert "charged" in message
    assert caught.value.generation_id == gen.id
    assert recorder.count("POST", "/v1/images") == 1
    assert recorder.count("GET", f"/v1/generations/{gen.id}") >= 2


def test_wait_with_timeout_0_takes_one_look(client, catalog):
    """The timeout is a deadline for waiting, yet timeout=0 still reads the job once."""
    gen = client.generations.wait(client.images.create(**example(catalog, "pixel-1")), timeout=30)
    assert client.generations.wait(gen.id, timeout=0).status == "completed"


def test_an_expired_output_url_is_refreshed_by_re_reading_the_generation(
    sandbox, make_client, catalog, tmp_path
):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    with sandbox.admin.config_changed(output_url_ttl_seconds=1):
        gen = client.images.create(**example(catalog, "pixel-1"))
        gen = client.generations.wait(gen, timeout=30, download=False)
    time.sleep(1.2)
    output = gen.outputs[0]
    stale = output.url
    recorder.clear()
    path = output.save(tmp_path / "saved")
    assert path.read_bytes()[:4] == b"\x89PNG"
    statuses = [(s.method, s.path.split("/")[1], s.status) for s in recorder.sent]
    assert statuses == [("GET", "files", 403), ("GET", "v1", 200), ("GET", "files", 200)]
    assert output.url != stale


def test_watch_costs_list_pages_not_one_request_per_job(make_client, catalog):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    request = example(catalog, "pixel-1")
    gens = [client.images.create(**{**request, "prompt": f"{n} [[slow:1]]"}) for n in range(20)]
    recorder.clear()
    finished = list(client.generations.watch(gens, timeout=30, poll_interval=0.05, download=False))
    assert sorted(g.id for g in finished) == sorted(g.id for g in gens)
    assert all(g.status == "completed" for g in finished)
    per_job = sum(recorder.count("GET", f"/v1/generations/{g.id}") for g in gens)
    pages = recorder.count("GET", "/v1/generations")
    assert pages >= 3  # it polled for a while...
    # ...and one GET per job per round would have cost len(gens) requests a round: the
    # watch paid one page a round, plus single GETs only for the last stragglers (fewer than
    # three left; how many rounds they take depends on how far apart the submits landed).
    assert per_job <= len(gens) // 2
    assert pages + per_job < pages * len(gens) / 4


def test_resume_after_a_kernel_restart_finds_pending_generations(make_client, catalog, tmp_path):
    journal = tmp_path / "journal.jsonl"
    before = make_client(journal=journal)
    request = example(catalog, "pixel-1")
    request["prompt"] += " [[slow:1]]"
    gen = before.images.create(**request)
    before.close()  # the kernel dies; only the journal file is left

    after = make_client(journal=journal, cache_dir=tmp_path / "other-cache")
    pending = after.generations.pending()
    assert [r["generation_id"] for r in pending] == [gen.id]
    resumed = after.generations.resume(wait=True)
    assert [g.id for g in resumed] == [gen.id]
    assert resumed[0].status == "completed"
    assert resumed[0].outputs[0].local_path is not None
    assert after.generations.pending() == []
