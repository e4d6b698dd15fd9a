"""A table's plan and run against the real sandbox: prices, charges, refusals, re-runs."""

from __future__ import annotations

import logging

import pandas as pd
import pyarrow.parquet as pq
import pytest

import mediagen as mg
from mediagen.datasets import RESULT_COLUMNS, PlanError, generate, plan


@pytest.fixture
def products():
    return pd.DataFrame(
        {
            "sku": ["a1", "b2", "c3", "d4"],
            "caption": ["a teapot", "a lamp", "a chair", "a kettle"],
            "style": ["watercolor", "photo", "watercolor", "photo"],
            "steps": [1, 2, 1, 2],
        },
        index=[10, 20, 30, 40],
    )


def test_the_total_is_the_sum_of_the_services_estimates(client, products):
    made = products.mediagen.plan(
        client, model="pixel-pro", prompt="{caption}, {style} style", quality="low"
    )
    assert list(made.requests.index) == [10, 20, 30, 40]
    assert made.requests.loc[20, "request"]["prompt"] == "a lamp, photo style"
    each = [
        client.models.estimate_request(r).credits_after_discount for r in made.requests["request"]
    ]
    assert made.total == pytest.approx(sum(each))
    assert made.total > 0
    assert list(made.requests["estimate"]) == pytest.approx(each)
    assert "credits" in made._repr_html_()
    assert "pixel-pro" in made._repr_html_()


def test_the_ledger_charges_what_the_results_say_once_per_row(
    client, tenant, charges, products, tmp_path, caplog
):
    caplog.set_level(logging.DEBUG)
    made = plan(products, client, model="pixel-1", prompt="{caption}", run_id="catalog-v1")
    out = made.run(output_dir=tmp_path / "renders")
    assert list(out.columns) == list(RESULT_COLUMNS)
    assert list(out.index) == [10, 20, 30, 40]
    assert (out["status"] == "completed").all()
    credits, count = charges(tenant)
    assert set(count.values()) == {1}
    assert len(count) == 4
    assert sum(credits.values()) == pytest.approx(out["credits"].sum())
    assert out["credits"].sum() == pytest.approx(made.total)
    again = generate(products, client, model="pixel-1", prompt="{caption}", run_id="catalog-v1")
    assert list(again["generation_id"]) == list(out["generation_id"])
    assert charges(tenant)[1] == count  # nothing paid twice
    stored = pq.read_table(tmp_path / "renders" / "results.parquet").to_pandas()
    assert list(stored["row"]) == [10, 20, 30, 40]
    assert list(stored["generation_id"]) == list(out["generation_id"])
    key = tenant.api_key
    assert key not in out.to_csv()
    assert key not in stored.to_csv()
    assert key not in caplog.text
    assert key not in (tmp_path / "renders" / "results.parquet").read_bytes().decode("latin-1")


def test_a_table_over_budget_is_refused_whole(client, tenant, charges, products):
    made = plan(products, client, model="pixel-pro", prompt="{caption}", quality="low")
    with pytest.raises(mg.BudgetExceededError):
        made.run(budget=made.total - 0.01)
    with mg.budget(made.total / 2), pytest.raises(mg.BudgetExceededError):
        made.run()
    assert charges(tenant)[1] == {}


@pytest.mark.parametrize(
    ("budget", "shown"),
    [(float("nan"), "nan"), (float("inf"), "inf"), (-1, "-1"), ("nan", "'nan'")],
    ids=["nan", "inf", "negative", "string"],
)
def test_a_budget_that_is_not_a_finite_number_refuses_the_run_before_any_charge(
    client, tenant, charges, products, budget, shown
):
    """``run(budget=nan)`` (the mean of an empty column) compared false with every total and
    ran the whole table: the gate names the argument and its value, and nothing is charged."""
    made = plan(products, client, model="pixel-1", prompt="{caption}")
    with pytest.raises(ValueError, match=rf"budget .*{shown}"):
        made.run(budget=budget)
    assert charges(tenant)[1] == {}


@pytest.mark.parametrize("where", ["a-file", "under-a-file"])
def test_an_output_dir_that_cannot_be_a_directory_is_refused_before_any_charge(
    client, tenant, charges, products, tmp_path, where
):
    """The run used to charge every row and then fail on saving the first output with a raw
    ``NotADirectoryError``: the destination is checked (and made) before the first submit."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the directory should be")
    target = blocker if where == "a-file" else blocker / "renders"
    made = plan(products, client, model="pixel-1", prompt="{caption}")
    with pytest.raises(ValueError, match=r"output_dir .*not-a-dir.*nothing was sent"):
        made.run(output_dir=target)
    assert charges(tenant)[1] == {}


def test_a_missing_column_or_a_bad_template_names_the_field(client, products):
    with pytest.raises(PlanError, match=r"prompt: column 'colour'"):
        plan(products, client, model="pixel-1", prompt="{caption} in {colour}")
    with pytest.raises(PlanError, match=r"seed: column 'nope'"):
        plan(products, client, model="pixel-1", prompt="x", seed=mg.col("nope"))
    with pytest.raises(PlanError, match=r"prompt: .*unmatched|prompt: .*expected"):
        plan(products, client, model="pixel-1", prompt="{caption")


def test_invalid_rows_are_named_and_nothing_is_sent(client, tenant, charges, products):
    products["quality"] = ["low", "ultra-mega", "low", "also-bad"]
    with pytest.raises(PlanError) as refused:
        plan(products, client, model="pixel-pro", prompt="{caption}", quality=mg.col("quality"))
    assert {label for label, _, _ in refused.value.problems} == {20, 40}
    assert {field for _, field, _ in refused.value.problems} == {"quality"}
    assert "row 20: quality" in str(refused.value)
    made = plan(
        products, client, model="pixel-pro", prompt="{caption}", quality=mg.col("quality"),
        on_invalid="skip",
    )  # fmt: skip
    assert list(made.requests["valid"]) == [True, False, True, False]
    out = made.run()
    assert list(out.index) == [10, 20, 30, 40]
    assert list(out["status"]) == ["completed", "skipped", "completed", "skipped"]
    assert charges(tenant)[1].total() == 2


def test_a_repeated_label_is_refused(client, products):
    with pytest.raises(PlanError, match="label"):
        plan(products.set_axis([1, 1, 2, 3]), client, model="pixel-1", prompt="{caption}")


def test_retry_failed_gives_failed_rows_a_new_key(client, tenant, charges):
    df = pd.DataFrame({"p": ["fine", "bad [[fail:safety]]"]})
    first = generate(df, client, model="pixel-1", prompt="{p}", run_id="r")
    assert list(first["status"]) == ["completed", "failed"]
    again = generate(df, client, model="pixel-1", prompt="{p}", run_id="r", retry_failed=True)
    assert again.loc[0, "generation_id"] == first.loc[0, "generation_id"]
    assert again.loc[1, "generation_id"] != first.loc[1, "generation_id"]
    assert charges(tenant)[1].total() == 1


def test_a_ten_thousand_row_table_plans_with_one_quote(client):
    df = pd.DataFrame({"caption": [f"product {i}" for i in range(10_000)]})
    made = df.mediagen.plan(client, model="pixel-1", prompt="{caption}")
    assert len(made.requests) == 10_000
    assert made.requests["key"].is_unique
    one = client.models.estimate_request({"model": "pixel-1", "prompt": "product 0"})
    assert made.total == pytest.approx(10_000 * one.credits_after_discount)


def test_a_spend_limit_refuses_the_whole_table(make_client, tenant, charges, products, tmp_path):
    limited = make_client(budget=mg.SpendLimit(daily=1, path=tmp_path / "spend.jsonl"))
    made = plan(products, limited, model="pixel-1", prompt="{caption}")
    assert made.total > 1
    with pytest.raises(mg.BudgetExceededError):
        made.run()
    assert charges(tenant)[1] == {}


def test_the_progress_bar_counts_rows_failures_and_spend(client, capsys):
    df = pd.DataFrame({"p": ["fine", "bad [[fail:safety]]", "also fine"]})
    generate(df, client, model="pixel-1", prompt="{p}", run_id="bar")
    shown = capsys.readouterr()
    assert "3 rows, 1 failed" in shown.err + shown.out
