"""The magics driven through IPython's ``InteractiveShell`` against the real sandbox.

Each test checks what a user would see (displayed text, usage messages) and what ends up bound
in the namespace, and, for money, what the sandbox's ledger says.
"""

from __future__ import annotations

import builtins
import re

import httpx
import pandas as pd
import pytest

import mediagen
import mediagen.extension as extension
from mediagen.display import _progress
from mediagen.magics._display import api_error_text
from mediagen.wire._fields import as_json


def ledger_kinds(sandbox, tenant) -> list[str]:
    return [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]]


def generations_of(tenant, sandbox) -> list:
    client = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url)
    return list(client.generations.list())


def image_models(shell) -> list[str]:
    return list(shell.run("%mediagen models image").result.index)


# -- loading --------------------------------------------------------------------------------


def test_load_registers_and_unload_removes_the_magics(shell):
    ip = shell.ip
    assert "mediagen" in ip.magics_manager.magics["line"]
    assert "mediagen" in ip.magics_manager.magics["cell"]
    assert any(isinstance(c, extension.MediagenMagics) for c in ip.configurables)
    ip.run_line_magic("unload_ext", "mediagen.extension")
    try:
        assert "mediagen" not in ip.magics_manager.magics["line"]
        assert "mediagen" not in ip.magics_manager.magics["cell"]
        assert not any(isinstance(c, extension.MediagenMagics) for c in ip.configurables)
    finally:
        ip.run_line_magic("load_ext", "mediagen.extension")


def test_the_models_a_cell_shows_render_themselves_without_the_extension():
    """No display formatter is registered for the client's models: each has its own HTML."""
    for cls in (mediagen.Generation, mediagen.GenerationOutput, mediagen.Estimate,
                mediagen.Credits):  # fmt: skip
        assert "_repr_html_" in vars(cls), cls


def test_load_ext_mediagen_itself(shell):
    ip = shell.ip
    ip.run_line_magic("unload_ext", "mediagen.extension")
    try:
        ip.run_line_magic("load_ext", "mediagen")
        assert "mediagen" in ip.magics_manager.magics["cell"]
        ip.run_line_magic("unload_ext", "mediagen")
        assert "mediagen" not in ip.magics_manager.magics["cell"]
    finally:
        ip.run_line_magic("load_ext", "mediagen.extension")


# -- line magics ------------------------------------------------------------------------------


def test_models_is_the_catalog_as_a_table(shell, sandbox, tenant):
    run = shell.run("%mediagen models video")
    assert run.success
    table = run.result
    assert isinstance(table, pd.DataFrame)
    client = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url)
    expected = sorted(m.id for m in client.models.list(type="video"))
    assert sorted(table.index) == expected
    assert set(table["type"]) == {"video"}
    assert table["modes"].str.len().min() > 0
    everything = shell.run("%mediagen models").result
    assert {"image", "video", "audio"} <= set(everything["type"])


def test_models_table_has_no_nan_for_models_without_an_audio_kind(shell):
    table = shell.run("%mediagen models").result
    assert not table["audio_kind"].isna().any()
    assert set(table.loc[table["type"] != "audio", "audio_kind"]) == {""}
    assert "NaN" not in repr(table)


def test_credits_shows_the_balance(shell):
    run = shell.run("%mediagen credits")
    assert run.success
    shown = repr(run.result)
    assert "balance: 1000" in shown
    assert "plan: pro" in shown


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%mediagen models movies", "usage: %mediagen models [image|video|audio]"),
        ("%mediagen teleport", "commands: models, credits, history"),
        ("%mediagen credit", "unknown command 'credit'; did you mean credits?"),
        ("%mediagen modles", "did you mean models?"),
        ("%mediagen history --since yesterday", "use an age like 30m, 24h, 7d"),
        ("%mediagen history --colour 1", "options: --since, --type, --model, -o"),
        ("%mediagen attach", "usage: %mediagen attach ID"),
        ("%mediagen video", "use the cell magic"),
    ],
)
def test_bad_line_arguments_give_usage_not_tracebacks(shell, line, expected):
    run = shell.run(line)
    assert not run.success
    assert "UsageError" in run.stderr
    assert expected in run.stderr
    assert "Traceback" not in run.text


# -- the cell magic ---------------------------------------------------------------------------


def test_image_cell_shows_estimate_binds_result_and_charges_the_estimate(shell, sandbox, tenant):
    run = shell.run("%%mediagen image -o img --yes\na lighthouse at dusk")
    assert run.success, run.text
    estimate_line = next(t for t in run.displayed if t.startswith("Estimate for"))
    img = shell.ns["img"]
    assert img.status == "completed"
    assert img.prompt == "a lighthouse at dusk"
    assert img.outputs
    assert img.outputs[0].content_type.startswith("image/")
    charged = [e for e in sandbox.admin.ledger(tenant.org_id)["entries"] if e["kind"] == "charge"]
    assert len(charged) == 1
    assert float(charged[0]["amount"]) == img.credits_charged
    assert f"{extension.credits_text(img.credits_charged)} credits" in estimate_line


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("%%mediagen image --no_such_field 1\nx", "--no_such_field is not a field of"),
        ("%%mediagen image --model nope\nx", "unknown model 'nope'; image models:"),
        ("%%mediagen picture\nx", "one of: image, video, audio"),
        ("%%mediagen image -o 1x\nx", "-o needs a Python variable name"),
        ("%%mediagen image\n", "cell body is empty"),  # IPython refuses it before the magic
    ],
)
def test_bad_cell_arguments_give_usage_and_spend_nothing(shell, sandbox, tenant, cell, expected):
    run = shell.run(cell)
    assert not run.success
    assert "UsageError" in run.stderr
    assert expected in run.stderr
    assert "Traceback" not in run.text
    assert ledger_kinds(sandbox, tenant) == ["grant"]


def test_a_bad_value_names_the_allowed_values(shell, sandbox, tenant):
    """A field with a closed set of values, taken from the real catalog."""
    client = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url)
    for entry in client.models.list(type="video"):
        raw = as_json(entry)
        for mode in raw["modes"]:
            for name, values in (mode.get("allowed") or {}).items():
                if isinstance(values, list) and name in mode.get("optional", []):
                    line = f"%%mediagen video --model {raw['id']} --mode {mode['id']}"
                    run = shell.run(f"{line} --{name} not-a-value\na cat")
                    assert "UsageError" in run.stderr
                    assert "allowed values: " + ", ".join(map(str, values)) in run.stderr
                    assert ledger_kinds(sandbox, tenant) == ["grant"]
                    return
    pytest.fail("the sandbox catalog has no video field with a closed list of values")


def test_spending_above_the_threshold_asks_first(shell, sandbox, tenant, monkeypatch):
    asked = []
    monkeypatch.setattr(builtins, "input", lambda q: asked.append(q) or "n")
    shell.run("%config MediagenMagics.confirm_above = 0")
    try:
        run = shell.run("%%mediagen image -o img\na quiet harbour")
        assert asked
        assert "Submit? [y/N]" in asked[0]
        assert "Not submitted; nothing was spent." in run.text
        assert "img" not in shell.ns
        assert ledger_kinds(sandbox, tenant) == ["grant"]

        monkeypatch.setattr(builtins, "input", lambda q: asked.append(q) or "y")
        run = shell.run("%%mediagen image -o img\na quiet harbour")
        assert shell.ns["img"].status == "completed"
        assert len(asked) == 2
    finally:
        shell.run("%config MediagenMagics.confirm_above = None")


def test_with_ask_off_run_all_never_waits_for_an_answer(shell, sandbox, tenant, monkeypatch):
    def no_input(question):
        raise AssertionError("ask = False must not prompt")

    monkeypatch.setattr(builtins, "input", no_input)
    shell.run("%config MediagenMagics.confirm_above = 0")
    shell.run("%config MediagenMagics.ask = False")
    try:
        run = shell.run("%%mediagen image -o img\na quiet harbour")
        assert "Cannot ask for confirmation here" in run.text
        assert "Not submitted; nothing was spent." in run.text
        assert "img" not in shell.ns
        assert ledger_kinds(sandbox, tenant) == ["grant"]
        run = shell.run("%%mediagen image --yes -o img\na quiet harbour")
        assert shell.ns["img"].status == "completed"
    finally:
        shell.run("%config MediagenMagics.confirm_above = None")
        shell.run("%config MediagenMagics.ask = True")


def test_module_threshold_and_yes(shell, sandbox, tenant, monkeypatch):
    monkeypatch.setattr(extension, "confirm_above", 0.0)

    def no_input(question):
        raise AssertionError("--yes must not ask")

    monkeypatch.setattr(builtins, "input", no_input)
    run = shell.run("%%mediagen image --yes -o img\na field of tulips")
    assert run.success, run.text
    assert shell.ns["img"].status == "completed"


def test_a_threshold_assigned_on_the_package_is_the_one_a_cell_reads(
    shell, sandbox, tenant, monkeypatch
):
    """``mediagen.magics.confirm_above = 0``, a plain assignment as a user writes it, makes the
    next cell ask (``mediagen.extension`` is the same module: it sees the value); assigning the
    old value back lets the cell spend without asking again."""
    asked = []
    monkeypatch.setattr(builtins, "input", lambda q: asked.append(q) or "n")
    before = mediagen.magics.confirm_above
    mediagen.magics.confirm_above = 0.0
    try:
        assert extension.confirm_above == 0.0
        run = shell.run("%%mediagen image -o img\na quiet harbour")
        assert len(asked) == 1
        assert "Not submitted; nothing was spent." in run.text
    finally:
        mediagen.magics.confirm_above = before
    run = shell.run("%%mediagen image -o img\na quiet harbour")
    assert len(asked) == 1
    assert shell.ns["img"].status == "completed"
    assert {"confirm_above", "wait_timeout", "wait_poll_interval"} <= set(dir(mediagen.magics))


def test_the_package_settings_save_and_restore_like_a_plain_modules_attributes():
    """A tool that saves a setting, patches it and puts it back (pytest's ``monkeypatch``, a
    notebook's ``try/finally``) finds each setting where a plain module keeps a data attribute:
    restoring leaves the value it saved, read through either name and by the magics, and
    deleting a setting is refused rather than losing it."""
    import inspect

    from mediagen.magics import _settings

    before = _settings.confirm_above
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mediagen.magics, "confirm_above", 3.0)
        patch.setattr(extension, "_client", "a client")
        assert _settings.confirm_above == 3.0
        assert _settings._client == "a client"
    assert _settings.confirm_above == mediagen.magics.confirm_above == before
    assert _settings._client is None
    assert inspect.isdatadescriptor(inspect.getattr_static(mediagen.magics, "confirm_above"))
    with pytest.raises(AttributeError):
        del mediagen.magics.wait_timeout
    assert mediagen.magics.wait_timeout == _settings.wait_timeout


def test_speech_takes_the_cell_body_as_text(shell, sandbox, tenant):
    client = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url)
    speech = next(
        as_json(m)
        for m in client.models.list(type="audio")
        if as_json(m).get("audio_kind") == "speech"
    )
    voice = speech["voices"][0]["name"]
    run = shell.run(
        f"%%mediagen audio --model {speech['id']} --voice_name {voice} -o hello --yes\n"
        "Hello from a notebook."
    )
    assert run.success, run.text
    hello = shell.ns["hello"]
    assert hello.status == "completed"
    assert hello.outputs[0].content_type.startswith("audio/")


def test_a_failed_generation_is_bound_shown_and_not_charged(shell, sandbox, tenant):
    run = shell.run("%%mediagen image -o bad --yes\na cat [[fail:safety]]")
    assert run.success
    assert shell.ns["bad"].status == "failed"
    assert "failed: safety" in run.text
    assert "Nothing was charged" in run.text
    assert "charge" not in ledger_kinds(sandbox, tenant)
    assert "refund" in ledger_kinds(sandbox, tenant)


def test_chaining_by_variable_name(shell, sandbox, tenant):
    client = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url)
    target = None
    for entry in client.models.list(type="video"):
        raw = as_json(entry)
        for mode in raw["modes"]:
            if "first_frame" in mode.get("required", []) and set(mode["required"]) <= {
                "prompt",
                "first_frame",
            }:
                target = (raw["id"], mode["id"])
                break
        if target:
            break
    assert target, "the sandbox catalog has no image-to-video mode"
    assert shell.run("%%mediagen image -o still --yes\na red kite").success
    run = shell.run(
        f"%%mediagen video --model {target[0]} --mode {target[1]} --first_frame still "
        "-o clip --yes\nthe kite takes off"
    )
    assert run.success, run.text
    clip = shell.ns["clip"]
    assert clip.status == "completed"
    assert clip.outputs[0].content_type.startswith("video/")


def test_no_wait_then_attach(shell):
    run = shell.run("%%mediagen image --no-wait -o later --yes\na windmill [[slow:1]]")
    assert run.success
    pending = shell.ns["later"]
    assert pending.status == "pending"
    assert f"%mediagen attach {pending.id}" in run.text
    listed = shell.run("%mediagen pending")
    assert pending.id in listed.text or pending.id in repr(listed.result)
    attached = shell.run(f"%mediagen attach {pending.id} -o later")
    assert attached.success
    assert shell.ns["later"].status == "completed"
    assert shell.ns["later"].id == pending.id


def test_attaching_to_a_job_that_already_ended_shows_what_a_wait_ends_with(shell, sandbox, tenant):
    """A cell shows the same whether the job ended before ``attach`` ran or while it waited:
    the summary with the job's own run time, and a failure's notice."""
    for prompt, name in (("a windmill", "done"), ("a cat [[fail:safety]]", "bad")):
        submitted = shell.run(f"%%mediagen image --no-wait -o {name} --yes\n{prompt}")
        assert submitted.success, submitted.text
        job = shell.ns[name]
        ended = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url)
        assert ended.generations.wait(job.id, timeout=60).is_terminal
        attached = shell.run(f"%mediagen attach {job.id} -o {name}")
        assert attached.success, attached.text
        assert shell.ns[name].is_terminal
        assert shell.ns[name].id == job.id
        if name == "done":
            charged = shell.ns[name].credits_charged
            summary = rf"completed · pixel-1 · {charged} credits charged in \d"
            assert re.search(summary, attached.text), attached.text
        else:
            assert "failed · pixel-1 · error safety in " in attached.text, attached.text
            assert "Nothing was charged" in attached.text


# -- interrupts --------------------------------------------------------------------------------


def test_an_interrupt_stops_the_waiting_not_the_generation(shell, sandbox, tenant, monkeypatch):
    """Ctrl-C (a kernel interrupt) while waiting: the job runs on, once, and can be re-attached."""
    real_update = _progress.Progress.update
    interrupts = []

    def interrupt_on_first_poll(self, *args, **kwargs):
        real_update(self, *args, **kwargs)
        if self.description.startswith("Generation") and not interrupts:
            interrupts.append(self.message)
            raise KeyboardInterrupt

    monkeypatch.setattr(_progress.Progress, "update", interrupt_on_first_poll)
    run = shell.run("%%mediagen image -o slow --yes\na snail race [[slow:2]]")
    assert interrupts, "the wait never reported progress"
    assert run.success, "the interrupt must be handled by the magic, not escape as a traceback"
    assert "KeyboardInterrupt" not in run.text
    slow = shell.ns["slow"]
    assert slow.status == "pending"
    assert "keeps running on the service and was not resubmitted" in run.text
    assert f"%mediagen attach {slow.id} -o slow" in run.text
    # Reserved once, not charged yet, not resubmitted.
    assert ledger_kinds(sandbox, tenant) == ["grant", "reserve"]

    monkeypatch.setattr(_progress.Progress, "update", real_update)
    attached = shell.run(f"%mediagen attach {slow.id} -o slow")
    assert attached.success, attached.text
    assert shell.ns["slow"].status == "completed"
    assert shell.ns["slow"].id == slow.id
    assert ledger_kinds(sandbox, tenant) == ["grant", "reserve", "charge"]
    assert [g.id for g in generations_of(tenant, sandbox)] == [slow.id]


def _losing_client(sandbox, tenant, tmp_path, lose: dict[str, bool]) -> mediagen.Client:
    """A client whose first image submit is interrupted (Ctrl-C) right after the service
    answered: the job exists and is charged, the answer never reaches the cell."""

    def interrupt_after_the_answer(response: httpx.Response) -> None:
        request = response.request
        if lose["on"] and request.method == "POST" and request.url.path == "/v1/images":
            lose["on"] = False
            raise KeyboardInterrupt

    http = httpx.Client(event_hooks={"response": [interrupt_after_the_answer]})
    return mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, http_client=http,
                           cache_dir=tmp_path, journal=tmp_path / "journal.jsonl")  # fmt: skip


def test_a_submit_interrupted_after_its_answer_is_attached_by_key_after_a_restart_once(
    shell, sandbox, tenant, tmp_path
):
    lose = {"on": True}
    mediagen.magics.use_client(_losing_client(sandbox, tenant, tmp_path, lose))
    run = shell.run("%%mediagen image -o pic --yes\na lighthouse at dusk")
    assert not lose["on"], "the submit was never interrupted"
    assert run.success, "the interrupt must be handled by the magic, not escape as a traceback"
    assert "KeyboardInterrupt" not in run.text
    found = re.search(r"%mediagen attach --key (\S+) -o pic", run.text)
    assert found, run.text
    key = found.group(1)
    assert "pic" not in shell.ns
    # made and reserved, once (a loaded machine may have finished and charged it already)
    assert [k for k in ledger_kinds(sandbox, tenant) if k != "charge"] == ["grant", "reserve"]

    # A kernel restart: the magics loaded again over a new client on the same journal.
    shell.ip.run_line_magic("unload_ext", "mediagen.extension")
    shell.ip.run_line_magic("load_ext", "mediagen.extension")
    restarted = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url,
                                cache_dir=tmp_path, journal=tmp_path / "journal.jsonl")  # fmt: skip
    mediagen.magics.use_client(restarted)
    attached = shell.run(f"%mediagen attach --key {key} -o pic")
    assert attached.success, attached.text
    pic = shell.ns["pic"]
    assert pic.idempotency_key == key
    assert pic.status == "completed"
    assert [g.id for g in generations_of(tenant, sandbox)] == [pic.id]
    assert ledger_kinds(sandbox, tenant).count("reserve") == 1  # charged once

    again = shell.run(f"%mediagen attach --key {key}")  # answered now: nothing waits under it
    assert f"no submit with idempotency key {key!r}" in again.text
    assert "%mediagen pending" in again.text
    assert ledger_kinds(sandbox, tenant).count("reserve") == 1


def test_running_an_interrupted_cell_again_reuses_its_key_and_charges_once(
    shell, sandbox, tenant, tmp_path
):
    """The natural reaction to an interrupted cell is to run it again: that sends the lost
    submit's key, so the service answers with the job it made instead of a second charge."""
    lose = {"on": True}
    mediagen.magics.use_client(_losing_client(sandbox, tenant, tmp_path, lose))
    cell = "%%mediagen image -o pic --yes\na lighthouse at dawn"
    first = shell.run(cell)
    key = re.search(r"attach --key (\S+)", first.text).group(1)  # type: ignore[union-attr]
    second = shell.run(cell)
    assert second.success, second.text
    assert shell.ns["pic"].idempotency_key == key
    assert ledger_kinds(sandbox, tenant).count("reserve") == 1


def test_history_of_one_generation_says_generation(shell, sandbox, tenant):
    shell.run("%%mediagen image --yes\none kite")
    run = shell.run("%mediagen history --since 1d")
    assert run.success, run.text
    assert "1 generation in the last 1d" in repr(run.result)
    assert "1 generations" not in repr(run.result) + run.stderr


def test_history_summarises_spend_with_progress(shell, sandbox, tenant):
    for prompt in ("one", "two", "three [[fail:timeout]]"):
        shell.run(f"%%mediagen image --yes\n{prompt}")
    run = shell.run("%mediagen history --since 1d -o frame")
    assert run.success, run.text
    summary = run.result
    assert "3 generations in the last 1d" in repr(summary)
    assert "2 completed, 1 failed (33% failure rate)" in repr(summary)
    assert "Fetching history: " in run.stderr
    frame = shell.ns["frame"]
    assert len(frame) == 3
    spent = frame.loc[frame["status"] == "completed", "credits_charged"].sum()
    assert f"{extension.credits_text(spent)} credits spent" in repr(summary)


def test_a_refusal_for_credits_is_shown_with_what_it_needs_and_what_is_available(
    sandbox, tenant_factory, tmp_path
):
    poor = tenant_factory(balance=0.25)
    client = mediagen.Client(api_key=poor.api_key, base_url=sandbox.base_url, cache_dir=tmp_path)
    try:
        with pytest.raises(mediagen.PaymentRequiredError) as caught:
            client.images.create(model="pixel-1", prompt="a lighthouse at dusk")
    finally:
        client.close()
    shown = api_error_text(caught.value)
    assert shown is not None
    assert shown.startswith("402 payment_required: ")
    assert caught.value.required == 1
    assert "this request needs 1 credit, 0.25 available" in shown
