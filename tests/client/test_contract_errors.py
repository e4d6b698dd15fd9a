"""Every error status of the spec, provoked for real against the sandbox over loopback."""

from __future__ import annotations

import uuid

import pytest
from client_helpers import Recorder, example, fill_placeholders

import mediagen


def _image(catalog):
    return example(catalog, "pixel-1")


@pytest.mark.parametrize("how", ["invalid", "revoked", "expired"])
def test_401_for_an_invalid_revoked_or_expired_key_is_not_retried(
    sandbox, tenant, make_client, how
):
    if how == "revoked":
        sandbox.admin.revoke_key(tenant.key_id)
        key = tenant.api_key
    elif how == "expired":
        sandbox.admin.expire_key(tenant.key_id)
        key = tenant.api_key
    else:
        key = "mgk_not_a_real_key_" + uuid.uuid4().hex
    recorder = Recorder()
    client = make_client(tenant=type(tenant)(tenant.org_id, "", "", key), recorder=recorder)
    with pytest.raises(mediagen.AuthenticationError) as caught:
        client.credits.get()
    error = caught.value
    assert (error.status, error.code) == (401, "unauthenticated")
    assert error.trace_id
    assert error.trace_id.startswith("trace_")
    assert len(recorder.sent) == 1
    assert key not in str(error)
    assert key not in repr(error)


def test_401_for_a_missing_key_is_caught_before_sending(sandbox, monkeypatch):
    monkeypatch.delenv("MEDIAGEN_API_KEY", raising=False)
    with pytest.raises(mediagen.MissingAPIKeyError):
        mediagen.Client(base_url=sandbox.base_url)


def test_402_names_required_and_available_and_reserves_nothing(
    sandbox, tenant_factory, make_client, catalog
):
    poor = tenant_factory(balance=3)
    recorder = Recorder()
    client = make_client(tenant=poor, recorder=recorder)
    request = example(catalog, "vidra-2", "text_to_video")
    quote = client.models.estimate_request(request)
    assert quote.can_afford is False
    sent_before = len(recorder.sent)
    with pytest.raises(mediagen.PaymentRequiredError) as caught:
        client.videos.create(**request)
    assert caught.value.required == quote.credits_after_discount
    assert caught.value.available == 3.0
    assert f"needs {quote.credits_after_discount:g} credits, 3 available" in str(caught.value)
    # the figures come with the refusal: no estimate or balance is asked for afterwards
    assert [r.path for r in recorder.sent[sent_before:]] == ["/v1/videos"]
    assert client.credits.get().balance == 3.0
    assert not [e for e in sandbox.admin.ledger(poor.org_id)["entries"] if e["kind"] == "reserve"]


def test_402_for_the_member_cap(tenant_factory, make_client, catalog):
    capped = tenant_factory(balance=1000, cap=10)
    client = make_client(tenant=capped)
    credits = client.credits.get()
    assert credits.member_limit.limit == 10.0
    assert credits.balance == 10.0
    with pytest.raises(mediagen.PaymentRequiredError) as caught:
        client.videos.create(**example(catalog, "vidra-2", "text_to_video"))
    assert caught.value.available == 10.0
    assert caught.value.required is not None
    assert caught.value.required > 10.0
    assert "cap" in caught.value.message


def test_403_when_the_plan_cannot_use_the_model(tenant_factory, make_client, catalog, media):
    free = tenant_factory(plan="free")
    client = make_client(tenant=free)
    video = client.uploads.upload(media["video"])
    request = fill_placeholders(example(catalog, "upscale-pro"), {"video": video.asset_id})
    assert client.models.estimate("upscale-pro", duration_seconds=1, tier="1080p").allowed is False
    with pytest.raises(mediagen.PermissionDeniedError) as caught:
        client.videos.create(**request)
    assert (caught.value.status, caught.value.code) == (403, "forbidden")
    assert "plan" in caught.value.message


def test_404_for_unknown_generations_models_and_other_peoples_generations(
    tenant_factory, make_client, catalog
):
    owner, stranger = make_client(), make_client(tenant=tenant_factory())
    with pytest.raises(mediagen.NotFoundError):
        owner.generations.get(str(uuid.uuid4()))
    with pytest.raises(mediagen.NotFoundError):
        owner.models.get("no-such-model")
    gen = owner.images.create(**_image(catalog))
    with pytest.raises(mediagen.NotFoundError) as caught:
        stranger.generations.get(gen.id)
    assert caught.value.code == "not_found"


def test_409_same_idempotency_key_with_a_different_body(sandbox, tenant, client, catalog):
    request = _image(catalog)
    first = client.images.create(**request, idempotency_key="same-key")
    again = client.images.create(**request, idempotency_key="same-key")
    assert again.id == first.id
    with pytest.raises(mediagen.ConflictError) as caught:
        client.images.create(**{**request, "prompt": "other"}, idempotency_key="same-key")
    assert caught.value.status == 409
    reserves = [e for e in sandbox.admin.ledger(tenant.org_id)["entries"] if e["kind"] == "reserve"]
    assert len(reserves) == 1


def test_422_from_the_server_is_shown_field_by_field(client, catalog):
    request = {**example(catalog, "vidra-2", "text_to_video"), "duration_seconds": 7}
    request["aspect_ratio"] = "5:4"
    with pytest.raises(mediagen.ValidationError) as caught:
        client.videos.create(**request, validate=False)
    error = caught.value
    assert not isinstance(error, mediagen.LocalValidationError)
    fields = {tuple(d["loc"])[-1] for d in error.details}
    assert {"duration_seconds", "aspect_ratio"} <= fields
    text = str(error)
    assert "body.duration_seconds:" in text
    assert "body.aspect_ratio:" in text


def test_422_when_header_and_body_idempotency_keys_differ(client, catalog):
    with pytest.raises(mediagen.ValidationError):
        client.images.create(
            **_image(catalog), idempotency_key="body-key", extra_headers={"Idempotency-Key": "h"}
        )


def test_422_for_a_list_page_size_out_of_bounds(client):
    with pytest.raises(mediagen.ValidationError) as caught:
        client.generations._list_page_raw(limit=1000)
    assert caught.value.details


def test_local_checks_name_the_field_and_allowed_values_before_sending(make_client, catalog):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    client.models.get("vidra-2")
    recorder.clear()
    request = {**example(catalog, "vidra-2", "text_to_video"), "tier": "4k"}
    with pytest.raises(mediagen.LocalValidationError) as caught:
        client.videos.create(**request)
    problem = next(d for d in caught.value.details if d["loc"][-1] == "tier")
    assert "720p" in problem["msg"]
    assert "1080p" in problem["msg"]
    assert "nothing was sent" in str(caught.value)
    assert recorder.count("POST") == 0


def test_an_unknown_keyword_is_refused_with_a_suggestion(make_client, catalog):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    with pytest.raises(mediagen.UnknownFieldError, match="duration_seconds"):
        client.videos.create(**example(catalog, "vidra-2", "text_to_video"), duraton_seconds=5)
    assert recorder.sent == []
