import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo

    mo.md(
        """
        # mediagen in marimo

        The same widgets as in JupyterLab, in a marimo notebook: compare models on a few
        prompts, see the price before anything runs, pick the winners, and read them back in
        cells that re-run when you choose. The key comes from the environment
        (`MEDIAGEN_API_KEY`, `MEDIAGEN_BASE_URL`), never from the notebook; `mediagen sandbox`
        serves the whole API locally, free.
        """
    )
    return (mo,)


@app.cell
def _():
    import mediagen as mg

    client = mg.Client()
    balance = client.credits.get().balance
    return balance, client, mg


@app.cell
def _(balance, mo):
    mo.md(f"Balance: **{balance:,.2f} credits**")
    return


@app.cell
def _(client, mg, mo):
    grid = mg.compare(
        ["a lighthouse at dusk", "a red fox in fresh snow"],
        ["pixel-1", {"model": "pixel-pro", "quality": "high"}],
        client,
    )
    # mo.ui.anywidget: cells that read `compared.value` re-run when the grid changes
    compared = mo.ui.anywidget(grid)
    compared
    return compared, grid


@app.cell
def _(compared, grid, mo):
    chosen = compared.value["chosen"]  # {"<row>": <column>}, set by the grid's Choose buttons
    mo.md(
        f"{len(chosen)} of {len(grid.plan.prompts)} rows judged: Run the grid, then Choose "
        "the best image of each row."
    ) if not chosen else grid.choices[["prompt", "column", "credits", "generation_id"]]
    return


@app.cell
def _(mo):
    mo.md(
        """
        ## The studio

        Pick a model, fill its form, see the estimate, submit, and watch the job: the same
        studio as in JupyterLab. The cell after it runs again each time a job finishes.
        """
    )
    return


@app.cell
def _(client, mg, mo):
    studio = mo.ui.anywidget(mg.studio(client))
    studio
    return (studio,)


@app.cell
def _(mo, studio):
    # `last_id` changes when a job of the studio finishes; `studio.last` is that generation
    finished = studio.last if studio.value["last_id"] else None
    mo.md(
        "No job finished in the studio yet."
        if finished is None
        else f"Last finished: **{finished.model}**, {finished.status}, "
        f"{finished.credits_charged} credits (`{finished.id}`)"
    )
    return


@app.cell
def _(mo):
    mo.md(
        """
        ## What you spent

        The spend dashboard: filter by type, status, model and dates, three plots, and the
        history as a table sorted by its headers. Refresh after a job to see it.
        """
    )
    return


@app.cell
def _(client, mg):
    board = mg.spend_dashboard(client, page_size=5)
    board
    return (board,)


@app.cell
def _(mo):
    mo.md(
        """
        ## A table's plan

        A DataFrame of prompts becomes a plan: what each row will cost, before anything runs
        (`plan.run(output_dir=...)` runs it).
        """
    )
    return


@app.cell
def _():
    import pandas as pd

    captions = pd.DataFrame(
        {"caption": ["a kite", "a lighthouse", "a fox"], "style": ["ink", "oil", "pixel"]}
    )
    plan = captions.mediagen.plan(model="pixel-1", prompt="{caption}, {style} style")
    plan
    return (plan,)


if __name__ == "__main__":
    app.run()
