"""The magics read the local history store: ``%mediagen history`` syncs it and can answer
offline, and a cell's wait expects the time the user's stored history says."""

from __future__ import annotations

import mediagen
from mediagen import history


def test_history_is_read_from_the_store_and_answers_offline(
    shell, sandbox, tenant, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEDIAGEN_CACHE_DIR", str(tmp_path))
    for prompt in ("one kite", "a storm [[fail:timeout]]"):
        assert shell.run(f"%%mediagen image --yes\n{prompt}").success
    synced = shell.run("%mediagen history -o frame")
    assert synced.success, synced.text
    assert "2 generations" in repr(synced.result)
    with mediagen.Client() as client:  # the magics' own connection: same service, key, cache
        stored = history.HistoryStore.for_client(client).frame()
    assert sorted(stored["id"]) == sorted(shell.ns["frame"]["id"])

    sandbox.admin.revoke_key(tenant.key_id)  # the service now refuses this key
    offline = shell.run("%mediagen history --offline")
    assert offline.success, offline.text
    summary = repr(offline.result)
    assert "2 generations: " in summary
    assert "1 completed, 1 failed" in summary


def test_a_cell_wait_expects_the_time_the_users_stored_history_says(
    shell, sandbox, tenant, tmp_path, monkeypatch
):
    # Five images made with this key on another machine (a cache and journal of its own).
    with mediagen.Client(
        api_key=tenant.api_key,
        base_url=sandbox.base_url,
        cache_dir=tmp_path / "laptop",
        poll_interval=0.05,
    ) as laptop:
        for i in range(5):
            laptop.images.create(model="pixel-1", prompt=f"kite {i} [[slow:0.3]]").wait()
    monkeypatch.setenv("MEDIAGEN_CACHE_DIR", str(tmp_path / "here"))
    assert shell.run("%mediagen history").success  # this machine's store, synced
    run = shell.run("%%mediagen image --yes\na kite [[slow:0.3]]")
    assert run.success, run.text
    assert "(usually ~0." in run.stderr, run.stderr


def test_a_plain_wait_expects_the_time_the_users_stored_history_says(
    shell, sandbox, tenant, tmp_path, monkeypatch
):
    """``client.generations.wait`` outside a cell, extension loaded: the progress bar's scale
    comes from the client's own store (given the generation, or only its id), not from the
    default cache's journal, which knows nothing here."""
    monkeypatch.setenv("MEDIAGEN_CACHE_DIR", str(tmp_path / "default"))
    with mediagen.Client(
        api_key=tenant.api_key,
        base_url=sandbox.base_url,
        cache_dir=tmp_path / "laptop",
        poll_interval=0.05,
    ) as laptop:  # made on another machine: this machine's journal knows none of them
        for i in range(5):
            laptop.images.create(model="pixel-1", prompt=f"kite {i} [[slow:0.3]]").wait()
    shell.ns["cache"] = str(tmp_path / "here")
    setup = shell.run(
        "import mediagen\n"
        "c = mediagen.Client(cache_dir=cache, poll_interval=0.05)\n"
        "_ = c.generations.to_dataframe()  # this machine's store, synced"
    )
    assert setup.success, setup.text
    for target in ("g", "g.id"):
        run = shell.run(
            f"g = c.images.create(model='pixel-1', prompt='a kite [[slow:0.3]]')\n"
            f"_ = c.generations.wait({target})"
        )
        assert run.success, run.text
        assert "(usually ~0." in run.stderr, (target, run.stderr)


def test_a_cell_shows_the_forecast_from_the_users_history_before_it_is_paid(
    shell, tmp_path, monkeypatch
):
    monkeypatch.setenv("MEDIAGEN_CACHE_DIR", str(tmp_path))
    first = shell.run("%%mediagen image --yes\nkite 0 [[slow:0.2]]")
    assert first.success, first.text
    assert "Forecast: no local history yet" in first.text
    assert shell.run("%mediagen history").success  # the store exists from now on

    few = shell.run("%%mediagen image --yes\nkite 1 [[slow:0.2]]")
    assert "Forecast: 1 job: no time forecast yet" in few.text
    assert "1 past generation, needs 5" in few.text

    for i in range(2, 6):
        assert shell.run(f"%%mediagen image --yes\nkite {i} [[slow:0.2]]").success
    assert shell.run("%%mediagen image --yes\na storm [[fail:timeout]]").success
    seasoned = shell.run("%%mediagen image --yes -o k6\nkite 6")
    assert seasoned.success, seasoned.text
    note = next(d for d in seasoned.displayed if d.startswith("Forecast:"))
    assert note.startswith("Forecast: 1 job: all done in about "), note
    assert "0.1 failures expected; from 7 past generations of yours" in note
    shown = seasoned.displayed
    generation = next(i for i, d in enumerate(shown) if d.startswith("Generation("))
    assert shown.index(note) < generation, "the forecast comes before anything is paid"
