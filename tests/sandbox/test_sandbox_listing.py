"""GET /v1/generations: envelope, page size, filters, and cursors that survive inserts."""

from __future__ import annotations

import pytest
from sandbox_helpers import assert_error, client, image_example, wait, with_marker


def test_envelope_and_page_size_bounds(sandbox, tenant):
    sandbox.admin.seed_generations(tenant.member_id, 130, org_id=tenant.org_id)
    with client(sandbox, tenant) as c:
        page = c.get("/v1/generations").json()
        assert set(page) >= {"data", "next_cursor", "has_more"}
        assert len(page["data"]) == 20
        assert page["has_more"] is True
        big = c.get("/v1/generations", params={"limit": 100}).json()
        assert len(big["data"]) == 100
        created = [g["created_at"] for g in big["data"]]
        assert created == sorted(created, reverse=True)
        assert_error(c.get("/v1/generations", params={"limit": 101}), 422, "validation_error")


def test_walking_all_pages_sees_every_row_once(sandbox, tenant):
    sandbox.admin.seed_generations(tenant.member_id, 95, org_id=tenant.org_id)
    with client(sandbox, tenant) as c:
        seen, cursor = [], None
        while True:
            params = {"limit": 10, **({"after": cursor} if cursor else {})}
            page = c.get("/v1/generations", params=params).json()
            seen += [g["id"] for g in page["data"]]
            cursor = page["next_cursor"]
            if cursor is None:
                assert page["has_more"] is False
                break
    assert len(seen) == len(set(seen)) == 95


def test_cursor_is_stable_while_generations_arrive(sandbox, tenant):
    """New generations land between every page fetch: no row twice, no row skipped."""
    _model, body = image_example(sandbox)
    sandbox.admin.seed_generations(tenant.member_id, 60, org_id=tenant.org_id)
    with client(sandbox, tenant) as c:
        before = [g["id"] for g in c.get("/v1/generations", params={"limit": 100}).json()["data"]]
        seen: list[str] = []
        inserted: list[str] = []
        cursor = None
        while True:
            params = {"limit": 7, **({"after": cursor} if cursor else {})}
            page = c.get("/v1/generations", params=params).json()
            seen += [g["id"] for g in page["data"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
            for _ in range(2):  # arrivals between two page fetches
                inserted.append(c.post("/v1/images", json=body).json()["id"])
    assert len(seen) == len(set(seen)), "a row was returned twice"
    assert seen == before, "the walk must be exactly the rows that existed when it began"
    assert not set(inserted) & set(seen)
    assert len(inserted) >= 16


def test_filters(sandbox, tenant):
    model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        ok = c.post("/v1/images", json=body).json()
        bad = c.post("/v1/images", json=with_marker(body, "[[fail:safety]]")).json()
        wait(c, ok["id"])
        wait(c, bad["id"])
        pending = c.post("/v1/images", json=with_marker(body, "[[slow:60]]")).json()

        def ids(**params):
            return [g["id"] for g in c.get("/v1/generations", params=params).json()["data"]]

        assert ids(status="failed") == [bad["id"]]
        assert ids(status="completed") == [ok["id"]]
        assert ids(status="pending") == [pending["id"]]
        assert ids(type="image") == [pending["id"], bad["id"], ok["id"]]
        assert ids(type="video") == []
        assert ids(model=model) == [pending["id"], bad["id"], ok["id"]]
        assert ids(model="other-model") == []
        assert ids(created_after=ok["created_at"]) == [pending["id"], bad["id"]]
        assert ids(status="completed", created_after=ok["created_at"]) == []


@pytest.mark.parametrize("cursor", ["garbage", "QUJD", "x" * 300])
def test_foreign_cursor_is_422(sandbox, tenant, cursor):
    with client(sandbox, tenant) as c:
        r = c.get("/v1/generations", params={"after": cursor})
    assert_error(r, 422, "validation_error")


def test_a_slow_marker_is_the_time_from_created_at_to_completed_at(sandbox, tenant):
    """The latency a client reads from the generation itself (its created_at to its
    completed_at) is at least what the marker asked for, however long the submit took."""
    import datetime as dt
    from concurrent.futures import ThreadPoolExecutor

    model, body = image_example(sandbox)
    with client(sandbox, tenant) as c, ThreadPoolExecutor(24) as pool:
        # at once: each submit's transaction waits for the others' (its created_at later)
        made = list(pool.map(
            lambda _: c.post("/v1/images", json=with_marker(body, "[[slow:0.3]]")).json(),
            range(24),
        ))  # fmt: skip
        for generation in made:
            done = wait(c, generation["id"])
            took = dt.datetime.fromisoformat(done["completed_at"]) - dt.datetime.fromisoformat(
                done["created_at"]
            )
            assert took.total_seconds() >= 0.3, (model, done["created_at"], done["completed_at"])
