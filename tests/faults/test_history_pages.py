"""History pages attacked on the way from the sandbox (through a relay that rewrites them).

The history asks for the next page with a cursor found by scanning the page's bytes, before the
page is parsed (``mediagen.history._fetch``). A wrong guess the service refuses, a page cut
short, a page that is JSON but not history: each ends with every generation exactly once, or a
clear error, never a row from a wrong page.
"""

from __future__ import annotations

import json

import pytest
from client_faults import Relay, Reply

import mediagen
from mediagen.history import PageError


def test_a_guess_the_service_refuses_is_not_the_users_error(sandbox, tenant, tmp_path):
    """Against the sandbox: pages rewritten so the scan guesses a cursor the service refuses
    (422); the history still reads every generation, the careful way."""
    sandbox.admin.seed_generations(tenant.member_id, 450, completed_fraction=0.9)
    relay = Relay(sandbox.base_url)
    forward = relay.respond
    refused = []

    def misleading(request):
        answer = forward(request)
        if request.path.startswith("/v1/generations") and answer.status == 200:
            page = json.loads(answer.body)
            for item in page["data"]:
                item["result_meta"] = {"next_cursor": "not-a-cursor"}
            page = {"next_cursor": page["next_cursor"], "has_more": page["has_more"], **page}
            return Reply(200, {"Content-Type": "application/json"}, json.dumps(page).encode())
        if answer.status == 422:
            refused.append(request.path)
        return answer

    relay.respond = misleading
    try:
        with mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path) as c:
            frame = c.generations.to_dataframe(store=False)
            stored = c.generations.to_dataframe()
    finally:
        relay.close()
    assert len(frame) == len(stored) == 450
    assert frame["id"].is_unique
    assert stored["id"].is_unique
    assert refused  # the wrong guess was sent, and refused, without failing the read


def test_a_page_cut_short_is_asked_for_again(sandbox, tenant, tmp_path):
    sandbox.admin.seed_generations(tenant.member_id, 450, completed_fraction=0.9)
    relay = Relay(sandbox.base_url)
    forward = relay.respond
    lists = [0]

    def cutting(request):
        answer = forward(request)
        if request.path.startswith("/v1/generations") and answer.status == 200:
            lists[0] += 1
            if lists[0] in (2, 4):  # the second page's answer, then a later one, cut in half
                return Reply(200, answer.headers, answer.body[: len(answer.body) // 2])
        return answer

    relay.respond = cutting
    try:
        with mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path) as c:
            frame = c.generations.to_dataframe(store=False)
    finally:
        relay.close()
    assert len(frame) == 450
    assert frame["id"].is_unique
    assert lists[0] >= 7  # 5 pages, and the 2 cut ones again


def test_a_page_that_is_json_but_not_history_says_so(sandbox, tenant, tmp_path):
    sandbox.admin.seed_generations(tenant.member_id, 250, completed_fraction=0.9)
    relay = Relay(sandbox.base_url)
    forward = relay.respond

    def odd(request):
        answer = forward(request)
        if request.path.startswith("/v1/generations") and answer.status == 200:
            page = json.loads(answer.body)
            if page["data"]:
                page["data"][-1]["prompt"] = 12345
            return Reply(200, {"Content-Type": "application/json"}, json.dumps(page).encode())
        return answer

    relay.respond = odd
    try:
        with (
            mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path) as c,
            pytest.raises(PageError, match=r"GET /v1/generations .*prompt"),
        ):
            c.generations.to_dataframe()
    finally:
        relay.close()
