"""No request and no organization stalls the others: a submit naming one asset thousands of
times is answered at once while other organizations are served, and render workers are shared
out across organizations, so one organization's flood of large jobs does not hold back
another's single image."""

from __future__ import annotations

import threading

import httpx
import pytest
from sandbox_faults import api, assert_spec_error, wait_generation

from mediagen_sandbox.testing import running_sandbox

# Far above what a served request takes, far below the stall it guards against (20-30 s).
SERVED_WITHIN = 5.0

HEAVY_IMAGES = {"model": "lumen-4k", "prompt": "a mountain lake " * 200, "quality": "4K",
                "generate_image_count": 4}  # fmt: skip


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/images", {"model": "pixel-pro", "prompt": "x",
                        "reference_images": ["asset_example_image"] * 10_000}),
        ("/v1/videos", {"model": "storyshot", "mode": "multi_shot", "shot_type": "customize",
                        "multi_prompt": [{"prompt": "a", "duration": 2}],
                        "elements": [{"name": f"e{i}", "images": ["asset_example_image"] * 64}
                                     for i in range(64)]}),
    ],
)  # fmt: skip
def test_a_submit_naming_one_asset_thousands_of_times_stalls_no_one(
    sandbox, tenant_factory, path, body
):
    attacker, bystander = tenant_factory(), tenant_factory()
    answer: list[httpx.Response] = []
    with api(sandbox, attacker, timeout=120) as c:
        heavy = threading.Thread(target=lambda: answer.append(c.post(path, json=body)))
        heavy.start()
        try:
            with api(sandbox, bystander, timeout=SERVED_WITHIN) as other:
                for _ in range(5):
                    assert other.get("/v1/credits").status_code == 200
        finally:
            heavy.join()
    assert_spec_error(answer[0], 422, "validation_error")
    with api(sandbox, attacker) as c:
        assert c.get("/v1/credits").json()["reserved"] == 0


@pytest.mark.slow
def test_one_organizations_flood_of_large_jobs_does_not_hold_back_anothers_image(tmp_path):
    with running_sandbox(data_dir=tmp_path / "data") as sb:
        flooder, small = sb.new_tenant(balance=100_000), sb.new_tenant()
        with api(sb, flooder) as f, api(sb, small) as s:
            flood = [f.post("/v1/images", json=HEAVY_IMAGES).json()["id"] for _ in range(4)]
            mine = s.post("/v1/images", json={"model": "pixel-1", "prompt": "just one"}).json()
            assert wait_generation(s, mine["id"])["status"] == "completed"
            statuses = [f.get(f"/v1/generations/{g}").json()["status"] for g in flood]
            assert statuses.count("pending") >= 2, statuses
