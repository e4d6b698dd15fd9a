"""The catalog over HTTP: its line-up, its ready-to-send examples, its rules and its prices.

Each example request is sent exactly as the catalog shows it, its charge is compared with the
estimate the client's query mapping asks for (the "estimate equals charge" promise), and its
outputs are checked against what was asked. Each rule is provoked with a real request.
"""

from __future__ import annotations

import io
import json

import httpx
import pytest
from sandbox_helpers import assert_error, client, endpoint, models, upload, wait

from mediagen.pricing.catalog import catalog_for
from mediagen_sandbox.schemas import AudioRequest, ImageRequest, VideoRequest

ALWAYS = {"model", "mode", "idempotency_key", "project_id"}


def entry_of(sandbox, model_id: str) -> dict:
    with client(sandbox) as c:
        r = c.get(f"/v1/models/{model_id}")
        r.raise_for_status()
        return r.json()


def estimate(c: httpx.Client, model_id: str, **query) -> dict:
    r = c.get(f"/v1/models/{model_id}/estimate", params=query)
    assert r.status_code == 200, r.text
    return r.json()


def submit(c: httpx.Client, body: dict) -> httpx.Response:
    kind = {"video": "video", "image": "image", "audio": "audio"}
    model = c.get(f"/v1/models/{body['model']}").json()
    return c.post(endpoint(kind[model["type"]]), json=body)


def problem(response: httpx.Response, field: str, type_: str | None = None) -> dict:
    """The one 422 detail about ``field`` (its loc ends with the field)."""
    error = assert_error(response, 422, "validation_error")
    hits = [d for d in error["details"] if d["loc"][-1] in (field, *_nested(d, field))]
    assert hits, error
    if type_ is not None:
        assert hits[0]["type"] == type_, hits
    return hits[0]


def _nested(d: dict, field: str) -> list[str]:
    last = str(d["loc"][-1])
    return [last] if last.endswith("." + field) else []


def test_line_up_covers_every_kind_and_every_request_field(sandbox):
    entries = models(sandbox)
    assert len(entries) >= 10
    kinds = {e["type"] for e in entries}
    assert kinds == {"image", "video", "audio"}
    assert {e["audio_kind"] for e in entries if e["type"] == "audio"} == {"speech", "music"}
    for kind, schema in (("video", VideoRequest), ("image", ImageRequest), ("audio", AudioRequest)):
        accepted = set()
        for e in entries:
            if e["type"] == kind:
                for m in e["modes"]:
                    accepted |= set(m["required"]) | set(m["optional"])
        missing = set(schema.model_fields) - ALWAYS - accepted
        assert not missing, f"no {kind} model accepts {sorted(missing)}"
    units = {m["price"]["unit"] for e in entries for m in e["modes"]}
    assert units >= {"second", "generation", "image", "character"}
    assert any("|" in m["price"].get("by", "") for e in entries for m in e["modes"])
    assert any(
        isinstance(rule, dict) and "by_tier" in rule
        for e in entries
        for m in e["modes"]
        for rule in m["allowed"].values()
    )
    for e in entries:
        assert set(e["example_request"]) == {m["id"] for m in e["modes"]}
        assert e["price_summary"]
        with client(sandbox) as c:
            assert c.get(f"/v1/models/{e['id']}").json() == e
    with client(sandbox) as c:
        only_audio = c.get("/v1/models", params={"type": "audio"}).json()["data"]
    assert only_audio
    assert {e["type"] for e in only_audio} == {"audio"}


EXAMPLES = [
    (model_id, mode_id)
    for model_id, mode_ids in {
        "pixel-1": ["default"],
        "pixel-pro": ["default"],
        "lumen-4k": ["default"],
        "vidra-2": ["text_to_video", "image_to_video", "reference_to_video", "extend"],
        "vidra-edit": ["default"],
        "motionmax": ["default"],
        "talkhead": ["default"],
        "upscale-pro": ["default"],
        "storyshot": ["multi_shot", "keyframes"],
        "wave-1": ["default"],
        "voxa-tts": ["default"],
        "tunesmith": ["default"],
        "tunesmith-long": ["default"],
    }.items()
    for mode_id in mode_ids
]


def test_the_example_list_is_the_whole_catalog(sandbox):
    served = {(e["id"], m["id"]) for e in models(sandbox) for m in e["modes"]}
    assert served == set(EXAMPLES)


@pytest.mark.parametrize(("model_id", "mode_id"), EXAMPLES)
def test_example_is_accepted_as_is_charged_its_estimate_and_makes_what_it_says(
    sandbox, tenant_factory, model_id, mode_id
):
    tenant = tenant_factory(balance=5000, discount_percent=10)
    entry = entry_of(sandbox, model_id)
    body = entry["example_request"][mode_id]
    mode = next(m for m in entry["modes"] if m["id"] == mode_id)
    with client(sandbox, tenant) as c:
        quote = estimate(c, model_id, **catalog_for(entry).estimate_query(body))
        assert quote["allowed"]
        assert quote["can_afford"]
        assert quote["discount_percent"] == 10
        r = submit(c, body)
        assert r.status_code == 200, r.text
        pending = r.json()
        assert pending["status"] == "pending"
        assert pending["credits_charged"] is None
        gen = wait(c, pending["id"], timeout=120)
    assert gen["status"] == "completed", gen
    assert gen["credits_charged"] == quote["credits_after_discount"]
    assert gen["mode"] == mode_id
    defaults = {**mode["defaults"], **body}
    outputs = gen["outputs"]
    count = defaults.get("generate_image_count") or defaults.get("sample_count") or 1
    assert len(outputs) == count
    for out in outputs:
        assert out["asset_id"].startswith("asset_")
        assert out["content_type"].split("/")[0] == entry["type"]
        with httpx.Client() as plain:
            media = plain.get(out["url"])
        assert media.status_code == 200
        assert media.headers["content-type"] == out["content_type"]
        if entry["type"] == "image":
            from PIL import Image

            img = Image.open(io.BytesIO(media.content))
            assert img.size == (out["width"], out["height"])
        if quote["billable_duration_seconds"] and entry["type"] != "image":
            if mode_id == "extend":  # the extension continues the source clip
                assert out["duration_seconds"] > quote["billable_duration_seconds"]
            elif model_id not in ("upscale-pro", "talkhead"):  # they follow the input's length
                assert out["duration_seconds"] == pytest.approx(
                    quote["billable_duration_seconds"], abs=0.1
                )


def test_tier_decides_the_allowed_durations(sandbox, tenant):
    with client(sandbox, tenant) as c:
        body = {"model": "vidra-2", "mode": "text_to_video", "prompt": "x", "tier": "1080p"}
        d = problem(submit(c, {**body, "duration_seconds": 10}), "duration_seconds")
        assert d["type"] == "value_not_allowed"
        assert "1080p" in d["msg"]
        assert "5" in d["msg"]
        assert submit(c, {**body, "tier": "720p", "duration_seconds": 10}).status_code == 200
        r = c.get(
            "/v1/models/vidra-2/estimate",
            params={"mode": "text_to_video", "tier": "1080p", "duration_seconds": 10},
        )
        assert problem(r, "duration_seconds")["loc"][0] == "query"
        assert problem(submit(c, {**body, "tier": "4k"}), "tier", "value_not_allowed")


def test_mode_rules(sandbox, tenant):
    with client(sandbox, tenant) as c:
        d = problem(submit(c, {"model": "vidra-2", "prompt": "x"}), "mode", "missing")
        assert "text_to_video" in d["msg"]
        problem(submit(c, {"model": "vidra-2", "mode": "dance", "prompt": "x"}), "mode")
        r = submit(c, {"model": "vidra-2", "mode": "text_to_video", "prompt": "x", "audio": "a"})
        assert "prompt" in problem(r, "audio", "extra_forbidden_for_mode")["msg"]
        problem(submit(c, {"model": "vidra-2", "mode": "image_to_video"}), "first_frame", "missing")
        # a schema default sent as-is is not a choice: a mode without `prompt` ignores ""
        r = submit(c, {"model": "upscale-pro", "prompt": "", "source_video": "asset_nope"})
        error = assert_error(r, 422, "validation_error")
        assert [d["loc"][-1] for d in error["details"]] == ["source_video"]
        r = c.post("/v1/videos", json={"model": "pixel-1", "prompt": "x"})
        assert "POST /v1/images" in problem(r, "model", "wrong_endpoint")["msg"]


def test_every_problem_is_listed_at_once(sandbox, tenant):
    body = {"model": "pixel-1", "prompt": "x", "aspect_ratio": "2:1", "resolution": "8k",
            "generate_image_count": 9, "mask_image": "asset_missing"}  # fmt: skip
    with client(sandbox, tenant) as c:
        error = assert_error(submit(c, body), 422, "validation_error")
    fields = {d["loc"][-1] for d in error["details"]}
    assert fields == {"aspect_ratio", "resolution", "generate_image_count", "mask_image"}
    assert all(d["loc"][0] == "body" for d in error["details"])


def test_asset_references_must_exist_be_ready_and_be_the_right_media(
    sandbox, tenant, tenant_factory
):
    with client(sandbox, tenant) as c:
        wav = _wav_bytes()
        audio_id = upload(c, wav, "audio/wav", "voice.wav")
        body = {"model": "vidra-2", "mode": "image_to_video", "first_frame": audio_id}
        assert "audio" in problem(submit(c, body), "first_frame", "asset_media")["msg"]
        missing = {**body, "first_frame": "asset_" + "0" * 24}
        problem(submit(c, missing), "first_frame", "asset_not_found")
        registered = c.post(
            "/v1/uploads",
            json={"filename": "a.png", "content_type": "image/png", "size_bytes": 10},
        ).json()
        problem(submit(c, {**body, "first_frame": registered["asset_id"]}), "first_frame",
                "asset_not_ready")  # fmt: skip
        image_id = upload(c, _png_bytes())
    other = tenant_factory()
    with client(sandbox, other) as c:  # another organization's asset is unknown
        problem(submit(c, {**body, "first_frame": image_id}), "first_frame", "asset_not_found")


def test_extension_needs_a_completed_video_of_the_organization(sandbox, tenant):
    with client(sandbox, tenant) as c:
        image = c.post("/v1/images", json={"model": "pixel-1", "prompt": "x"}).json()
        slow = c.post(
            "/v1/videos",
            json={"model": "wave-1", "prompt": "slow [[slow:30]]", "num_frames": 40,
                  "frames_per_second": 16},
        ).json()  # fmt: skip
        wait(c, image["id"])
        for source in (image["id"], slow["id"]):
            body = {"model": "vidra-2", "mode": "extend", "source_generation_id": source}
            problem(submit(c, body), "source_generation_id", "source_not_completed_video")
        body["source_generation_id"] = "9b2f6a52-3c57-4a4c-9ac1-6a3f1f3b7a11"
        problem(submit(c, body), "source_generation_id", "not_found")
        first = wait(c, c.post("/v1/videos", json={"model": "wave-1", "prompt": "a"}).json()["id"])
        body["source_generation_id"] = first["id"]
        extended = wait(c, submit(c, body).json()["id"], timeout=120)
    assert extended["status"] == "completed"
    source_out, out = first["outputs"][0], extended["outputs"][0]
    assert (out["width"], out["height"]) == (source_out["width"], source_out["height"])
    assert out["duration_seconds"] == pytest.approx(source_out["duration_seconds"] + 5, abs=0.1)


def test_video_timing_rules(sandbox, tenant):
    with client(sandbox, tenant) as c:
        kf = {"model": "storyshot", "mode": "keyframes", "prompt": "x", "duration_seconds": 5,
              "keyframes": [{"image": "asset_example_image", "frame_index": 120}]}  # fmt: skip
        assert "119" in problem(submit(c, kf), "frame_index", "out_of_range")["msg"]
        kf["keyframes"][0]["frame_index"] = 119
        assert submit(c, kf).status_code == 200
        wave = {"model": "wave-1", "prompt": "x", "num_frames": 40, "frames_per_second": 24}
        assert "1.667" in problem(submit(c, wave), "num_frames", "frame_rate_rule")["msg"]
        problem(submit(c, {**wave, "frames_per_second": 30}), "frames_per_second")
        motion = c.get("/v1/models/motionmax").json()["example_request"]["default"]
        long = {**motion, "duration_seconds": 12}
        assert "10" in problem(submit(c, long), "duration_seconds", "less_than_equal")["msg"]
        # the motion video is 2 s long: 12 s cannot follow it, whatever the orientation
        r = submit(c, {**long, "character_orientation": "video"})
        assert "motion video" in problem(r, "duration_seconds")["msg"]
        shots = {"model": "storyshot", "mode": "multi_shot", "shot_type": "customize"}
        problem(submit(c, shots), "multi_prompt", "missing")
        r = submit(c, {**shots, "multi_prompt": [{"prompt": "a", "duration": 12}]})
        problem(r, "multi_prompt[0].duration", "out_of_range")
        problem(submit(c, {**shots, "shot_type": "intelligent"}), "prompt", "missing")
        talk = c.get("/v1/models/talkhead").json()["example_request"]["default"]
        problem(submit(c, {**talk, "audio_duration_seconds": 9}), "audio_duration_seconds")


def test_image_rules(sandbox, tenant):
    with client(sandbox, tenant) as c:
        both = {"model": "pixel-pro", "prompt": "x", "size": "1024x1024", "image_size": "square"}
        problem(submit(c, both), "image_size", "mutually_exclusive")
        mask = {"model": "pixel-1", "prompt": "x", "mask_image": "asset_example_image"}
        problem(submit(c, mask), "mask_image", "missing_dependency")
        jpeg = {"model": "pixel-pro", "prompt": "x", "background": "transparent",
                "output_format": "jpeg"}  # fmt: skip
        problem(submit(c, jpeg), "background", "incompatible")
        too_many = {"model": "pixel-1", "prompt": "x",
                    "reference_images": ["asset_example_image"] * 5}  # fmt: skip
        problem(submit(c, too_many), "reference_images", "too_many")
        preset = {"model": "pixel-pro", "prompt": "x", "image_size": "portrait_16_9",
                  "background": "transparent", "generate_image_count": 2}  # fmt: skip
        quote = estimate(c, "pixel-pro", size="1024x1536", generation_count=2)
        gen = wait(c, submit(c, preset).json()["id"])
    assert gen["credits_charged"] == quote["credits_after_discount"] == 6.0
    assert [(o["width"], o["height"]) for o in gen["outputs"]] == [(1024, 1536)] * 2
    with httpx.Client() as plain:
        from PIL import Image

        img = Image.open(io.BytesIO(plain.get(gen["outputs"][0]["url"]).content))
    assert img.mode == "RGBA"
    assert img.getpixel((0, 0))[3] == 0


def test_audio_rules(sandbox, tenant):
    with client(sandbox, tenant) as c:
        speech = {"model": "voxa-tts", "text": "Hi"}
        assert "Aria" in problem(submit(c, {**speech, "voice_name": "Zed"}), "voice_name")["msg"]
        both = {**speech, "segments": [{"voice_name": "Aria", "text": "a"}]}
        problem(submit(c, both), "segments", "mutually_exclusive")
        problem(submit(c, {"model": "voxa-tts"}), "text", "missing")
        problem(submit(c, {**speech, "speed": 1.3}), "speed", "out_of_range")
        music = {"model": "tunesmith", "prompt": "x"}
        problem(submit(c, {**music, "seed": 3, "sample_count": 2}), "seed", "mutually_exclusive")
        assert submit(c, {**music, "seed": 3, "sample_count": 1}).status_code == 200
        problem(submit(c, {"model": "tunesmith"}), "prompt", "missing")
        plan = {"sections": [{"name": "intro", "duration_seconds": 20},
                             {"name": "outro", "duration_seconds": 20}]}  # fmt: skip
        r = submit(c, {"model": "tunesmith", "composition_plan": plan})
        assert "40" in problem(r, "composition_plan.sections", "out_of_range")["msg"]
        problem(submit(c, {**music, "duration_seconds": 31}), "duration_seconds", "out_of_range")
        song = {"model": "tunesmith-long", "prompt": "x", "lyrics": "la", "instrumental": True}
        problem(submit(c, song), "lyrics", "mutually_exclusive")


def test_multi_speaker_script_is_one_file_priced_per_character(sandbox, tenant):
    segments = [{"voice_name": "Aria", "text": "Hello Bruno."},
                {"voice_name": "voice_bruno", "text": "Hello Aria, nice to meet you."}]  # fmt: skip
    body = {"model": "voxa-tts", "segments": segments, "model_size": "large",
            "output_format": "wav_24000"}  # fmt: skip
    with client(sandbox, tenant) as c:
        chars = sum(len(s["text"]) for s in segments)
        quote = estimate(
            c, "voxa-tts", text_length=chars, params=json.dumps({"model_size": "large"})
        )
        gen = wait(c, submit(c, body).json()["id"])
    assert quote["credits"] == round(chars * 0.04, 2)
    assert gen["credits_charged"] == quote["credits_after_discount"]
    [out] = gen["outputs"]
    assert out["content_type"] == "audio/wav"
    assert out["duration_seconds"] > 1


def test_unknown_voice_embedding_fails_the_job_and_refunds(sandbox, tenant):
    with client(sandbox, tenant) as c:
        before = c.get("/v1/credits").json()["balance"]
        body = {"model": "voxa-tts", "text": "Hi", "voice_embedding_id": "clone-42"}
        gen = wait(c, submit(c, body).json()["id"])
        after = c.get("/v1/credits").json()["balance"]
    assert gen["status"] == "failed"
    assert gen["error"]["code"] == "invalid_voice"
    assert "clone-42" in gen["error"]["message"]
    assert gen["credits_charged"] is None
    assert after == before


def test_conversational_continuation_by_interaction_id(sandbox, tenant, tenant_factory):
    with client(sandbox, tenant) as c:
        first = wait(c, c.post("/v1/videos", json={"model": "wave-1", "prompt": "a"}).json()["id"])
        interaction = first["result_meta"]["interaction_id"]
        body = {"model": "wave-1", "prompt": "now at night", "previous_interaction_id": interaction}
        second = wait(c, c.post("/v1/videos", json=body).json()["id"])
        assert second["status"] == "completed"
        assert second["result_meta"]["interaction_id"] != interaction
        unknown = {**body, "previous_interaction_id": "int_unknown"}
        problem(c.post("/v1/videos", json=unknown), "previous_interaction_id", "not_found")
    with client(sandbox, tenant_factory()) as c:
        problem(c.post("/v1/videos", json=body), "previous_interaction_id", "not_found")


def test_estimate_covers_every_meaning(sandbox, tenant):
    with client(sandbox, tenant) as c:
        base = estimate(c, "vidra-2", mode="text_to_video")
        assert base["credits"] == 30.0
        assert base["billable_duration_seconds"] == 5
        assert estimate(c, "vidra-2", mode="text_to_video", generate_audio="false")["credits"] == 20
        fast = estimate(c, "vidra-2", mode="text_to_video", variant="fast", duration_seconds=10)
        assert fast["credits"] == 30.0
        assert fast["billable_duration_seconds"] == 10
        hd = estimate(c, "vidra-2", mode="text_to_video", tier="1080p")
        assert hd["credits"] == 60.0
        named_wins = estimate(
            c, "vidra-2", mode="text_to_video", tier="720p", params=json.dumps({"tier": "1080p"})
        )
        assert named_wins["credits"] == 30.0
        frames = estimate(c, "vidra-2", mode="image_to_video", first_frame_count=1)
        assert frames["credits"] == 32.0
        refs = estimate(c, "vidra-2", mode="reference_to_video", reference_image_count=3)
        assert refs["credits"] == 37.5 + 3
        assert estimate(c, "pixel-pro", size="1536x1024", image_quality="high")["credits"] == 12
        assert estimate(c, "lumen-4k", image_quality="4K", generation_count=3)["credits"] == 24
        assert estimate(c, "pixel-1", image_resolution="2k", size="16:9")["credits"] == 2
        assert estimate(c, "wave-1", tier="720p", duration_seconds=4)["credits"] == 8
        assert estimate(c, "motionmax", quality="pro", duration_seconds=3)["credits"] == 18
        assert estimate(c, "tunesmith", duration_seconds=20, generation_count=2)["credits"] == 20
        assert estimate(c, "voxa-tts", text_length=100)["credits"] == 2
        tokens = estimate(c, "pixel-1", input_tokens=10, output_tokens=20, idempotency_key="k-1")
        assert tokens["credits"] == 1  # no sandbox model is priced by tokens
        assert estimate(c, "vidra-edit")["billable_duration_seconds"] is None
        problem(c.get("/v1/models/pixel-1/estimate", params={"params": "{nope"}), "params")
        problem(c.get("/v1/models/lumen-4k/estimate", params={"image_quality": "8K"}),
                "image_quality", "value_not_allowed")  # fmt: skip
        problem(c.get("/v1/models/vidra-2/estimate", params={"mode": "x"}), "mode")
        after = c.get("/v1/credits").json()
    assert after["balance"] == 1000
    assert after["reserved"] == 0


def _png_bytes() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (10, 200, 30)).save(buf, format="PNG")
    return buf.getvalue()


def _wav_bytes() -> bytes:
    import wave

    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x01" * 8000)
    return buf.getvalue()
