"""Two PUTs to one upload URL (a client's retry racing its own slow first attempt): one wins
cleanly, the other gets 409, and the asset ends ready with exactly the bytes sent, in one
complete file, with no part file left behind."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from sandbox_faults import api, png_bytes, put_upload, register_upload

TRIALS = 15

pytestmark = pytest.mark.slow


def _race(sandbox, tenant, attempt: Callable[[dict, bytes, ThreadPoolExecutor], list[int]]):
    """``TRIALS`` fresh uploads raced by ``attempt``; each must end with one clean winner."""
    data = png_bytes(400, 400, noise=True)
    with api(sandbox, tenant) as c, ThreadPoolExecutor(2) as pool:
        for _ in range(TRIALS):
            ticket = register_upload(c, data)
            statuses = attempt(ticket, data, pool)
            assert sorted(statuses) == [200, 409], statuses
            files = sorted((sandbox.data_dir / "assets").glob(f"{ticket['asset_id']}*"))
            assert [f.name for f in files] == [f"{ticket['asset_id']}.png"]
            assert files[0].read_bytes() == data
        used = c.post(
            "/v1/images",
            json={"model": "pixel-1", "prompt": "x", "reference_images": [ticket["asset_id"]]},
        )
        assert used.status_code == 200, used.text


def test_simultaneous_puts_one_wins_with_one_complete_file(sandbox, tenant):
    def together(ticket, data, pool):
        start = threading.Barrier(2)

        def put(_):
            start.wait()
            return put_upload(ticket, data).status_code

        return list(pool.map(put, range(2)))

    _race(sandbox, tenant, together)


def test_a_retry_overtaking_a_slow_first_put_wins_and_the_first_is_refused(sandbox, tenant):
    def overtaken(ticket, data, pool):
        retry_answered = threading.Event()

        def slow_body():
            yield data[: len(data) // 2]
            retry_answered.wait(30)
            yield data[len(data) // 2 :]

        first = pool.submit(put_upload, ticket, slow_body())
        retry = put_upload(ticket, data)
        retry_answered.set()
        assert retry.status_code == 200, retry.text
        return [retry.status_code, first.result().status_code]

    _race(sandbox, tenant, overtaken)
