"""Picker, form and live estimate against the real sandbox (trait changes stand in for clicks)."""

from __future__ import annotations

import asyncio

import pytest
from widget_loop import run, until

from mediagen.widgets import LiveEstimate, ModelPicker, RequestForm
from mediagen.widgets._loop_client import aclose, on_loop


@pytest.fixture(scope="module")
def catalog(sandbox, tenant_factory):
    """Every catalog entry of the sandbox, as the widgets get them (each model's JSON)."""
    import mediagen

    tenant = tenant_factory(plan="enterprise")
    with mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url) as client:

        async def load():
            try:
                return [m.to_dict() for m in await on_loop(client).models.list()]
            finally:
                await aclose(client)

        return {entry["id"]: entry for entry in run(load())}


def test_picker_filters_the_real_catalog_by_kind_and_search(catalog):
    picker = ModelPicker(catalog.values())
    assert [o["id"] for o in picker.options] == list(catalog)
    picker.kind = "audio"
    assert {o["id"] for o in picker.options} == {"voxa-tts", "tunesmith", "tunesmith-long"}
    picker.kind = "video"
    videos = {e for e, entry in catalog.items() if entry["type"] == "video"}
    assert {o["id"] for o in picker.options} == videos
    assert len(videos) == 7
    picker.query = "upscale"
    assert [o["id"] for o in picker.options] == ["upscale-pro"]
    picker.kind, picker.query = "", "speech"
    assert [o["id"] for o in picker.options] == ["voxa-tts"]  # its audio kind
    picker.query = "reference video"  # words from a mode name ("Reference to video")
    assert "vidra-2" in [o["id"] for o in picker.options]
    picker.query = "no such model anywhere"
    assert picker.options == []

    picker.query = ""
    vidra = next(o for o in picker.options if o["id"] == "vidra-2")
    entry = catalog["vidra-2"]
    assert vidra["price_summary"] == entry["price_summary"] != ""
    assert [m["id"] for m in vidra["modes"]] == [m["id"] for m in entry["modes"]]
    assert vidra["tiers"] == [t["id"] for t in entry.get("tiers") or []]
    picker.value = "vidra-2"
    assert picker.entry == entry


def test_every_model_and_mode_starts_as_a_valid_request_the_sandbox_prices(
    catalog, make_client, tenant_factory
):
    client = make_client(tenant_factory(plan="enterprise"))
    forms = []
    for entry in catalog.values():
        for mode in entry["modes"]:
            form = RequestForm(entry)
            form.mode = mode["id"]
            assert form.issues == {}, (entry["id"], mode["id"], form.issues)
            forms.append(form)

    async def scenario():
        try:
            models = on_loop(client).models
            return await asyncio.gather(*(models.estimate_request(f.request) for f in forms))
        finally:
            await aclose(client)

    for form, estimate in zip(forms, run(scenario()), strict=True):
        assert estimate.model == form.chosen_model
        assert estimate["allowed"] is True, (form.request, estimate)
        assert estimate.credits_after_discount > 0


def test_form_follows_the_tier_and_fills_defaults(catalog):
    entry = catalog["vidra-2"]
    form = RequestForm(entry)
    mode = entry["modes"][0]
    assert form.mode == "text_to_video"
    for name, value in mode["defaults"].items():
        if name not in entry["example_request"]["text_to_video"]:
            assert form.values[name] == value  # defaults prefilled
    assert form.values["prompt"] == entry["example_request"]["text_to_video"]["prompt"]
    fields = {f["name"]: f for f in form.fields}
    assert fields["prompt"]["control"] == "textarea"
    assert fields["prompt"]["required"]
    assert fields["generate_audio"]["control"] == "toggle"
    assert [o["value"] for o in fields["duration_seconds"]["options"]] == [5, 10]
    form.set_value("tier", "1080p")
    fields = {f["name"]: f for f in form.fields}
    assert [o["value"] for o in fields["duration_seconds"]["options"]] == [5]
    form.set_value("duration_seconds", 10)
    assert "not available at 1080p" in form.issues["duration_seconds"]
    form.set_value("tier", "720p")
    assert form.issues == {}
    assert form.request["duration_seconds"] == 10
    assert form.request["mode"] == "text_to_video"

    form.mode = "image_to_video"
    assert form.issues == {}  # the example gives a first frame
    refs = form.reference_fields("image")
    assert [f["name"] for f in refs] == ["first_frame", *[f["name"] for f in refs[1:]]]
    form.set_value("first_frame", "")
    assert form.issues["first_frame"] == "First frame is required"


# (model, mode, changes) -> the form shows an issue and the sandbox refuses the same request
INVALID = [
    ("vidra-2", "text_to_video", {"tier": "1080p", "duration_seconds": 10}, "duration_seconds"),
    ("voxa-tts", "default", {"segments": [{"text": "hi", "voice_name": "Aria"}]}, "_form"),
    ("pixel-1", "default", {"mask_image": "asset_example_image"}, "_form"),
    ("pixel-1", "default", {"generate_image_count": 7}, "generate_image_count"),
    (
        "motionmax",
        "default",
        {"character_orientation": "image", "duration_seconds": 12},
        "_form",
    ),
]


@pytest.mark.parametrize(("model", "mode", "changes", "where"), INVALID, ids=lambda v: str(v))
def test_invalid_combinations_show_inline_and_the_sandbox_agrees(
    catalog, make_client, tenant, model, mode, changes, where
):
    import mediagen

    form = RequestForm(catalog[model])
    form.mode = mode
    form.values = {**form.values, **changes}  # as the view would send an edit
    assert where in form.issues, form.issues
    assert not form.valid
    client = make_client(tenant, validate=False)
    kind = {"image": "images", "video": "videos", "audio": "audio"}[catalog[model]["type"]]
    with pytest.raises(mediagen.ValidationError) as caught:
        getattr(client, kind).create(**form.request)
    assert caught.value.status == 422
    assert client.credits.get().balance == 1000  # nothing reserved


class CountingModels:
    """An AsyncClient's real catalog resource, counting estimate calls; optionally slow for
    chosen requests."""

    def __init__(self, models, slow_when=None):
        self.models = models
        self.calls: list[dict] = []
        self.slow_when = slow_when or (lambda request: False)

    async def estimate_request(self, request):
        self.calls.append(dict(request))
        if self.slow_when(request):
            # finish even if the widget cancels its wait: the stale answer really arrives late
            inner = asyncio.ensure_future(self._slow(request))
            return await asyncio.shield(inner)
        return await self.models.estimate_request(request)

    async def _slow(self, request):
        await asyncio.sleep(0.4)
        self.slow_done = await self.models.estimate_request(request)
        return self.slow_done


def test_estimate_is_debounced_and_stale_answers_are_discarded(catalog, make_client, tenant):
    form = RequestForm()

    async def scenario():
        client = make_client(tenant).to_async()  # an AsyncClient, given as it is
        service = client.models = CountingModels(
            client.models, slow_when=lambda r: r.get("tier") == "1080p"
        )
        estimate = LiveEstimate(client, form, debounce=0.1)
        assert estimate.blocked_reason == "Choose a model"
        form.load(catalog["vidra-2"])
        for seconds in (10, 5, 10, 5, 10):  # typing quickly: one estimate for the last value
            form.set_value("duration_seconds", seconds)
        assert estimate.status == "estimating"
        assert estimate.blocked_reason == "Waiting for the estimate…"
        await until(lambda: estimate.status == "ready", what="estimate")
        assert [c["duration_seconds"] for c in service.calls] == [10]
        assert estimate.estimate["billable_duration_seconds"] == 10
        assert estimate.blocked_reason == ""

        form.set_value("tier", "1080p")  # invalid with 10 s: no estimate is asked for
        assert estimate.blocked_reason.startswith("Fix the form: Duration seconds 10")
        form.set_value("duration_seconds", 5)  # valid again: slow estimate in flight ...
        await until(lambda: len(service.calls) == 2, what="second call")
        form.set_value("tier", "720p")  # ... and superseded by a fast one
        await until(lambda: len(service.calls) == 3, what="third call")
        await until(lambda: getattr(service, "slow_done", None), what="stale answer")
        await asyncio.sleep(0.05)
        assert estimate.status == "ready"
        assert service.slow_done.credits != estimate.estimate["credits"]
        expected = await service.models.estimate_request(form.request)
        assert estimate.estimate == expected.to_dict()
        await client.aclose()

    run(scenario())


def test_submit_is_disabled_with_the_reason_when_unaffordable_or_not_allowed(
    catalog, make_client, tenant_factory, sandbox
):
    poor = tenant_factory(balance=1)
    free = tenant_factory(plan="free")

    async def scenario(tenant, model):
        client = make_client(tenant)
        estimate = LiveEstimate(client, RequestForm(catalog[model]), debounce=0)
        await until(lambda: estimate.status == "ready", what="estimate")
        estimate.submit()  # the view's button is disabled; a click from Python is refused too
        await asyncio.sleep(0.2)
        assert estimate.submitted_count == 0
        assert not estimate.submitting
        await aclose(client)
        return estimate

    poor_view = run(scenario(poor, "vidra-2"))
    assert poor_view.estimate["can_afford"] is False
    assert poor_view.blocked_reason == "Not enough credits: 30.0 needed, 1.0 available"
    free_view = run(scenario(free, "upscale-pro"))
    assert free_view.estimate["allowed"] is False
    assert free_view.blocked_reason.startswith("Not allowed: The organization's plan 'free'")
    for tenant in (poor, free):
        kinds = [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]]
        assert kinds == ["grant"], "nothing may be reserved for a refused submit"


def test_forms_put_required_and_common_fields_first_and_the_rest_under_advanced(catalog):
    def shown(model, mode=None):
        form = RequestForm(catalog[model])
        if mode:
            form.mode = mode
        visible = [f for f in form.fields if "merged_into" not in f]
        return form, [f["name"] for f in visible if not f["advanced"]], visible

    _, speech_main, speech_all = shown("voxa-tts")
    assert speech_main == ["text", "segments", "voice_name", "model_size"]
    assert len(speech_all) == 21
    advanced = [f["name"] for f in speech_all if f["advanced"]]
    assert {"previous_request_ids", "voice_embedding_id", "output_format"} <= set(advanced)
    assert [f["name"] for f in speech_all] == speech_main + advanced, "main fields come first"

    form, pro_main, pro_all = shown("pixel-pro")
    size_like = [f["label"] for f in pro_all if "size" in f["label"].lower()]
    assert size_like == ["Size"], "one size question, with the presets as its alternatives"
    size = next(f for f in pro_all if f["name"] == "size")
    assert size["alternative"]["name"] == "image_size"
    assert "square" in [o["value"] for o in size["alternative"]["options"]]
    assert pro_main[:2] == ["prompt", "size"]

    _, i2v_main, _ = shown("vidra-2", "image_to_video")
    assert i2v_main[0] == "first_frame"
    for entry in catalog.values():
        for mode in entry["modes"]:
            form = RequestForm(entry)
            form.mode = mode["id"]
            required = [f["name"] for f in form.fields if f["required"]]
            assert all(not f["advanced"] for f in form.fields if f["required"]), required
            missing = [f["name"] for f in form.fields if not f["help"]]
            assert not missing, (entry["id"], mode["id"], "fields without help", missing)


def test_choosing_a_size_preset_sends_only_the_preset_and_the_sandbox_prices_it(
    catalog, make_client, tenant
):
    form = RequestForm(catalog["pixel-pro"])
    size = next(f for f in form.fields if f["name"] == "size")
    preset = size["alternative"]["options"][-1]["value"]  # the last preset of the Size question
    assert preset == "landscape_16_9"
    form.values = {**form.values, "size": None, "image_size": preset}  # as the view sends it
    assert form.issues == {}
    assert form.request["image_size"] == "landscape_16_9"
    assert "size" not in form.request
    client = make_client(tenant)

    async def scenario():
        try:
            return await on_loop(client).models.estimate_request(form.request)
        finally:
            await aclose(client)

    estimate = run(scenario())
    assert estimate.allowed is True
    assert estimate.credits_after_discount > 0
