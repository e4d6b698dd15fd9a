"""A crash leaves nothing behind: after kill -9 of the server (and of nothing else) its render
workers and multiprocessing's resource tracker exit by themselves, and the next start removes
the part file of an upload the crash cut off."""

from __future__ import annotations

import contextlib
import threading

import httpx
import psutil
import pytest
from sandbox_faults import (
    api,
    png_bytes,
    put_upload,
    register_upload,
    wait_generation,
    wait_until,
)

from mediagen_sandbox.testing import running_sandbox

pytestmark = pytest.mark.slow


def _children(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    return [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_workers_and_resource_tracker_die_with_a_killed_server(tmp_path):
    with running_sandbox(data_dir=tmp_path / "data") as sb:
        for _ in range(3):  # three crashes: nothing may pile up
            tenant = sb.new_tenant()
            with api(sb, tenant) as c:  # a real render, so the workers are really in use
                gen = c.post("/v1/images", json={"model": "pixel-1", "prompt": "before"}).json()
                assert wait_generation(c, gen["id"])["status"] == "completed"
            pid = sb.process.pid
            workers = wait_until(
                lambda pid=pid: len(_children(pid)) >= 3 and _children(pid),
                60,
                "two render workers and the resource tracker run",
            )
            sb.crash()
            try:
                wait_until(lambda w=workers: not _alive(w), 30, "the server's children exit")
            finally:
                for orphan in _alive(workers):
                    orphan.kill()
            sb.start()


def test_an_upload_cut_off_by_a_crash_leaves_no_part_file(tmp_path):
    data = png_bytes(600, 600, noise=True)
    with running_sandbox(data_dir=tmp_path / "data") as sb:
        tenant = sb.new_tenant()
        assets = sb.data_dir / "assets"
        with api(sb, tenant) as c:
            ticket = register_upload(c, data)
        release = threading.Event()

        def body():
            yield data[: len(data) // 2]
            release.wait(60)
            yield data[len(data) // 2 :]

        def put():
            with contextlib.suppress(httpx.HTTPError):  # the server dies under it
                put_upload(ticket, body())

        sender = threading.Thread(target=put)
        sender.start()
        try:
            wait_until(lambda: list(assets.glob("*.part*")), 30, "the upload's part file exists")
            sb.crash()
        finally:
            release.set()
            sender.join(60)
        assert list(assets.glob("*.part*")), "the crash should have left the part file"
        sb.start()
        assert list(assets.glob("*.part*")) == []
        # The upload URL still works after the restart, for the whole file.
        put_again = put_upload(ticket, data)
        assert put_again.status_code == 200, put_again.text
        assert (assets / f"{ticket['asset_id']}.png").read_bytes() == data


def test_a_render_cut_off_by_a_crash_is_cleaned_up_and_done_again(tmp_path):
    heavy = {"model": "lumen-4k", "prompt": "a glacier", "quality": "4K", "generate_image_count": 4}
    with running_sandbox(data_dir=tmp_path / "data") as sb:
        tenant = sb.new_tenant(balance=10_000)
        assets = sb.data_dir / "assets"
        with api(sb, tenant) as c:
            gen = c.post("/v1/images", json=heavy).json()
            wait_until(lambda: list(assets.glob(".rendering-*")), 60, "a render is under way")
            children = _children(sb.process.pid)
            sb.crash()
            wait_until(lambda: not _alive(children), 30, "the server's children exit")
            assert list(assets.glob(".rendering-*")), "the crash should have left a render"
            sb.start()
            assert list(assets.glob(".rendering-*")) == []
        with api(sb, tenant) as c:
            done = wait_generation(c, gen["id"])
        assert done["status"] == "completed"
        assert len(done["outputs"]) == 4
