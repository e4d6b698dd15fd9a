"""``mediagen.compare``: the grid's price before it runs, its run, retries, winners and results,
against the real sandbox (trait changes and view messages stand in for clicks)."""

from __future__ import annotations

import pytest
from widget_loop import run, until

import mediagen
from mediagen.widgets import Compare
from mediagen.widgets._loop_client import aclose

PROMPTS = ["a lighthouse at dusk", "a red fox in snow", "a bowl of ramen"]
SETTINGS = ["pixel-1", {"model": "pixel-pro", "quality": "high"}, "voxa-tts"]


def ledger_kinds(sandbox, tenant) -> list[str]:
    return [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]]


def click(grid: Compare, **content) -> None:
    grid._on_view_message(grid, content, [])


def test_the_total_is_the_services_estimates_summed_and_nothing_is_spent_before_run(
    make_client, tenant, sandbox
):
    client = make_client(tenant)

    async def scenario():
        grid = mediagen.compare(PROMPTS, SETTINGS, client=client)
        await grid.ready
        assert ledger_kinds(sandbox, tenant) == ["grant"], "pricing spends nothing"
        assert grid.phase == "ready"
        bodies = [grid.plan.requests[(r, c)] for r in range(3) for c in range(3)]
        total = grid.total
        click(grid, action="run")
        await grid.wait()
        await aclose(client)
        return grid, bodies, total

    grid, bodies, total = run(scenario())
    # speech takes its prompt as `text`; image models as `prompt`
    assert [b.get("text") for b in bodies[2::3]] == PROMPTS
    assert all("prompt" not in b for b in bodies[2::3])
    assert [b["prompt"] for b in bodies[0::3]] == PROMPTS
    assert bodies[1]["quality"] == "high"
    quotes = [client.models.estimate_request(b).credits_after_discount for b in bodies]
    assert total == pytest.approx(sum(quotes))
    results = grid.results
    assert list(results["status"]) == ["completed"] * 9
    assert results["credits"].sum() == pytest.approx(total), "the charge is the estimate"
    assert results["generation_id"].nunique() == 9
    assert (results["latency_s"] >= 0).all()
    assert ledger_kinds(sandbox, tenant).count("charge") == 9
    assert all(cell["items"] for cell in grid.cells), "every cell shows its media"
    kinds = {cell["items"][0]["kind"] for cell in grid.cells}
    assert kinds == {"image", "audio"}
    assert grid.phase == "done"


def test_a_failed_cell_shows_its_code_and_a_double_retry_submits_once(make_client, tenant, sandbox):
    client = make_client(tenant)
    balance = client.credits.get().balance

    async def scenario():
        grid = Compare(["a calm sea", "a storm [[fail:safety]]"], ["pixel-1"], client=client)
        await grid.ready
        grid.run()
        await grid.wait()
        failed = dict(grid.cells[1])
        click(grid, action="retry", row=1, col=0)  # a double click on Retry
        click(grid, action="retry", row=1, col=0)
        click(grid, action="retry", row=0, col=0)  # a completed cell is not submitted again
        await grid.wait()
        await aclose(client)
        return grid, failed

    grid, failed = run(scenario())
    assert failed["status"] == "failed"
    assert failed["error_code"] == "safety"
    assert "safety filter" in failed["error_message"]
    assert grid.cells[1]["status"] == "failed"
    assert grid.cells[1]["generation_id"] != failed["generation_id"], "the retry is new"
    assert len(list(client.generations.list())) == 3
    kinds = ledger_kinds(sandbox, tenant)
    assert kinds.count("reserve") == 3
    assert kinds.count("refund") == 2, "each failure returns its reservation"
    spent = balance - client.credits.get().balance
    assert spent == pytest.approx(grid.cells[0]["credits"])


def test_winners_one_per_row_come_back_as_a_dataframe(make_client, tenant):
    client = make_client(tenant)

    async def scenario():
        grid = Compare(PROMPTS[:2], ["pixel-1", "pixel-pro"], client=client, run=True)
        await grid.wait()
        click(grid, action="choose", row=0, col=0)
        click(grid, action="choose", row=0, col=1)  # another pick replaces the row's winner
        click(grid, action="choose", row=1, col=0)
        click(grid, action="choose", row=1, col=0)  # picking the winner again clears it
        click(grid, action="choose", row=1, col=1)
        await aclose(client)
        return grid

    grid = run(scenario())
    choices = grid.choices
    assert list(choices["prompt"]) == PROMPTS[:2]
    assert list(choices["model"]) == ["pixel-pro", "pixel-pro"]
    assert choices["credits"].notna().all()
    assert choices["latency_s"].notna().all()
    assert set(choices["generation_id"]) <= set(grid.results["generation_id"])
    assert grid.chosen == {"0": 1, "1": 1}


def test_a_run_over_the_budget_is_refused_whole(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        tight = mediagen.Budget(1.0)
        grid = Compare(PROMPTS, ["pixel-1"], client=client, budget=tight)
        await grid.ready
        refused = grid.run()
        reason = grid.blocked_reason
        roomy = mediagen.Budget(grid.total)
        paid = Compare(PROMPTS, ["pixel-1"], client=client, budget=roomy, run=True)
        await paid.wait()
        await aclose(client)
        return grid, refused, reason, tight, paid, roomy

    grid, refused, reason, tight, paid, roomy = run(scenario())
    assert refused is None
    assert "nothing was sent" in reason
    assert grid.phase == "ready"
    assert tight.spent == 0
    assert [c["status"] for c in paid.cells] == ["completed"] * 3
    assert roomy.spent == pytest.approx(paid.total), "each submit reserved its price"
    assert ledger_kinds(sandbox, tenant).count("charge") == 3


def test_results_come_back_in_a_plain_script_without_a_front_end(make_client, tenant):
    client = make_client(tenant)
    grid = mediagen.compare(["a kite"], ["pixel-1", "voxa-tts"], client, run=True).join(60)
    results = grid.results
    assert list(results.columns[:5]) == ["row", "prompt", "column", "model", "mode"]
    assert list(results["status"]) == ["completed", "completed"]
    assert "2 done" in grid.snapshot_text()
    html = grid.snapshot_html()
    assert "a kite" in html
    assert "<img" in html, "an image thumbnail in the static fallback"


def test_an_unknown_model_fails_before_anything_is_priced(make_client, tenant):
    with pytest.raises(ValueError, match="unknown model 'no-such-model'"):
        mediagen.compare(["x"], ["pixel-1", "no-such-model"], make_client(tenant))


def test_a_saved_run_reopens_as_it_was_and_a_new_column_pays_only_for_its_cells(
    make_client, tenant, sandbox, tmp_path
):
    client = make_client(tenant)
    path = tmp_path / "runs" / "kites.parquet"

    async def scenario():
        grid = Compare(["a kite", "a boat [[fail:safety]]"], ["pixel-1"], client=client)
        await grid.ready
        grid.run()
        await grid.wait()
        grid.choose(0, 0)
        grid.save(path)
        reopened = Compare.load(path, client=client)
        await reopened.wait()
        priced_again = ledger_kinds(sandbox, tenant)
        await reopened.add_column("pixel-pro")
        added_total = reopened.total
        reopened.run()
        await reopened.wait()
        await aclose(client)
        return grid, reopened, priced_again, added_total

    grid, reopened, priced_again, added_total = run(scenario())
    assert priced_again.count("reserve") == 2, "opening a saved run sends nothing"
    before = grid.results
    after = reopened.results
    assert after[after["column"] == "pixel-1"].reset_index(drop=True).equals(before)
    assert reopened.chosen == {"0": 0}
    assert reopened.cells[0]["items"], "the media come back from the cache"
    key = reopened.cells[0]["items"][0]["key"]
    meta, buffers = reopened.media({"key": key}, [])
    assert meta["content_type"].startswith("image/")
    assert buffers[0]
    assert reopened.cells[2]["error_code"] == "safety"
    kinds = ledger_kinds(sandbox, tenant)
    assert kinds.count("reserve") == 4, "only the new column's two cells were submitted"
    new = reopened.results[reopened.results["model"] == "pixel-pro"]
    assert list(new["status"]) == ["completed", "failed"]
    assert added_total == pytest.approx(grid.total + new["estimate"].sum())


def test_mediagen_compare_load_opens_a_saved_grid(make_client, tenant, tmp_path):
    client = make_client(tenant)
    grid = mediagen.compare(["a kite"], ["pixel-1"], client, run=True).join(60)
    grid.save(tmp_path / "one.parquet")
    again = mediagen.compare.load(tmp_path / "one.parquet", client).join(60)
    assert again.results["generation_id"].tolist() == grid.results["generation_id"].tolist()
    assert "<img" in again.snapshot_html()


def test_the_wall_time_is_forecast_once_the_history_allows(make_client, tenant_factory, sandbox):
    newcomer, veteran = tenant_factory(), tenant_factory()
    sandbox.admin.seed_generations(
        veteran.member_id,
        40,
        models=["pixel-1", "pixel-pro"],
        completed_fraction=0.9,
    )

    async def forecast_of(tenant) -> str:
        client = make_client(tenant)
        grid = Compare(PROMPTS, ["pixel-1", "pixel-pro"], client=client)
        await grid.wait()
        await aclose(client)
        return grid.forecast_text

    seeded = ledger_kinds(sandbox, veteran)
    new, seasoned = run(forecast_of(newcomer)), run(forecast_of(veteran))
    assert new.startswith("6 jobs: no time forecast yet")
    assert seasoned.startswith("6 jobs: all done in about"), seasoned
    assert ledger_kinds(sandbox, veteran) == seeded, "pricing and forecasting spend nothing"


def test_at_most_concurrency_jobs_are_in_flight(make_client, tenant):
    client = make_client(tenant)
    busy: list[int] = []

    async def scenario():
        prompts = [f"a kite, take {n} [[slow:0.2]]" for n in range(6)]
        grid = Compare(prompts, ["pixel-1"], client=client, concurrency=2)
        await grid.ready
        grid.observe(
            lambda change: busy.append(
                sum(c["status"] in ("submitting", "pending") for c in change["new"])
            ),
            names="cells",
        )
        grid.run()
        queued = [c["status"] for c in grid.cells]
        await grid.wait()
        await aclose(client)
        return grid, queued

    grid, queued = run(scenario())
    assert queued.count("queued") == 6, "cells waiting for a slot say so"
    assert max(busy) == 2
    assert [c["status"] for c in grid.cells] == ["completed"] * 6


def test_a_run_saved_mid_way_is_followed_to_its_end_when_reopened_and_charged_once(
    make_client, tenant, sandbox, tmp_path
):
    client = make_client(tenant)
    path = tmp_path / "midway.parquet"

    async def scenario():
        grid = Compare(["a slow kite [[slow:1]]", "a boat"], ["pixel-1"], client=client)
        await grid.ready
        grid.run()
        await until(lambda: grid.cells[0]["status"] == "pending", what="the job to be sent")
        grid.save(path)
        sent = grid.cells[0]["generation_id"]
        grid.task.cancel()  # the kernel goes away; the job goes on at the service
        reopened = Compare.load(path, client=client)
        await reopened.wait()
        await aclose(client)
        return reopened, sent

    reopened, sent = run(scenario())
    assert reopened.cells[0]["status"] == "completed"
    assert reopened.cells[0]["generation_id"] == sent, "the same job, not a new one"
    assert reopened.cells[0]["items"]
    assert [c["status"] for c in reopened.cells] == ["completed", "completed"]
    assert ledger_kinds(sandbox, tenant).count("reserve") == 2, "nothing was paid twice"
    assert len(list(client.generations.list())) == 2


def test_the_exported_report_opens_without_the_kernel_or_the_cache(make_client, tenant, tmp_path):
    client = make_client(tenant, cache_dir=tmp_path / "cache")
    grid = mediagen.compare(["a kite <b>bold</b>"], ["pixel-1", "voxa-tts"], client, run=True)
    grid.join(60).choose(0, 1)
    report = grid.export_html(tmp_path / "report.html").read_text()
    assert report.startswith("<!doctype html>")
    assert '<img src="data:image/' in report
    assert '<audio controls src="data:audio/' in report, "speech plays from the file itself"
    assert str(tmp_path / "cache") not in report, "nothing points into the cache"
    assert "a kite &lt;b&gt;bold&lt;/b&gt;" in report
    assert "★ chosen" in report
    media = sum(p.stat().st_size for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert len(report) < 2 * media + 100_000, "no more than the media, base64-encoded"


def test_one_column_runs_again_paid_again_and_only_within_the_budget(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        budget = mediagen.Budget(3.5)  # the 2x2 grid (3 credits) and one pixel-pro cell more
        grid = Compare(PROMPTS[:2], ["pixel-1", "pixel-pro"], client=client, budget=budget)
        await grid.ready
        grid.run()
        await grid.wait()
        first = [c["generation_id"] for c in grid.cells]
        refused = grid.rerun(col=0)  # two pixel-1 cells: 2 credits, 0.5 left
        kept = [c["generation_id"] for c in grid.cells]
        grid.rerun(col=1)  # two pixel-pro cells: 1 credit
        reason = grid.blocked_reason
        await grid.wait()
        grid.budget = mediagen.Budget(10)
        grid.rerun(row=1)
        await grid.wait()
        await aclose(client)
        return grid, first, refused, kept, reason

    grid, first, refused, kept, reason = run(scenario())
    assert refused is None
    assert kept == first, "a refused re-run keeps the results"
    assert "nothing was sent" in reason, "0.5 credits left cannot pay for 1"
    ids = [c["generation_id"] for c in grid.cells]
    assert ids[:2] == first[:2], "row 0 untouched"
    assert ids[2] != first[2]
    assert ids[3] != first[3]
    assert [c["status"] for c in grid.cells] == ["completed"] * 4
    assert ledger_kinds(sandbox, tenant).count("charge") == 6


def test_a_setting_the_model_refuses_shows_why_and_is_never_sent(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        grid = Compare(
            PROMPTS[:2], ["pixel-1", {"model": "pixel-pro", "quality": "ultra"}], client=client
        )
        await grid.ready
        total = grid.total
        grid.run()
        await grid.wait()
        await aclose(client)
        return grid, total

    grid, total = run(scenario())
    refused = grid.results[grid.results["model"] == "pixel-pro"]
    assert list(refused["status"]) == ["invalid", "invalid"]
    assert list(refused["error"]) == ["validation_error"] * 2
    assert all("quality" in message for message in refused["error_message"])
    assert total == pytest.approx(2.0), "the total prices what can run"
    assert ledger_kinds(sandbox, tenant).count("reserve") == 2, "only pixel-1 was sent"


def test_cells_held_by_the_rate_limit_say_so_then_finish(make_client, tenant, sandbox):
    """A grid run on a key whose limit answers its polls with 429: a pending cell says it waits
    for the rate limit (not a frozen cell), every cell completes, and the notes are gone."""
    client = make_client(tenant)
    notes: list[str] = []

    async def scenario():
        prompts = [f"a held kite, take {n} [[slow:3]]" for n in range(3)]
        grid = Compare(prompts, ["pixel-1"], client=client, concurrency=3)
        await grid.ready
        grid.observe(
            lambda change: notes.extend(c.get("rate_note") or "" for c in change["new"]),
            names="cells",
        )
        with sandbox.admin.key_rate_limited(tenant.key_id, 1, burst=1):
            grid.run()
            await grid.wait()
        await aclose(client)
        return grid

    grid = run(scenario(), timeout=90)
    assert [c["status"] for c in grid.cells] == ["completed"] * 3
    assert any(n.startswith("waiting for the rate limit (") for n in notes), set(notes)
    assert not any(c.get("rate_note") for c in grid.cells)
