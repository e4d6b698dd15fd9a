// Compare: prompts x settings as a table. The total price and forecast sit above it with the
// Run button; cells fill in as jobs end, media fetched only when a cell scrolls into view.
// Clicking a finished cell makes it its row's winner (grid.choices in Python).
import { h, lazyFigures, formatNumber, errorBanner } from "./shared.js";

const TONES = { completed: "ok", failed: "bad", invalid: "bad", pending: "warn", submitting: "warn" };

function credits(value) { return value == null ? "–" : `${formatNumber(value)} cr`; }

function render({ model, el, experimental }) {
  const send = (content) => model.send(content);
  const total = h("span", { class: "mg-compare-total", "aria-live": "polite" });
  const forecast = h("span", { class: "mg-muted mg-compare-forecast" });
  const run = h("button", { type: "button", class: "mg-button mg-button--primary mg-compare-run" }, "Run");
  const blocked = h("span", { class: "mg-muted mg-compare-blocked", role: "status" });
  run.addEventListener("click", () => { run.disabled = true; send({ action: "run" }); });
  const banner = errorBanner(model);
  const table = h("table", { class: "mg-compare-table" });
  const scroller = h("div", { class: "mg-compare-scroll" }, table);
  el.append(h("div", { class: "mg-root mg-card mg-stack mg-compare" },
    h("div", { class: "mg-row" }, h("span", { class: "mg-title" }, "Compare"), total, run, blocked),
    forecast, banner.node, scroller));

  const figures = lazyFigures(experimental, { place: (slot, figure) => slot.replaceChildren(figure.node), options: () => ({ caption: false }) });
  const mediaSlot = (item) => {
    const slot = h("div", { class: "mg-compare-media", dataset: { item: JSON.stringify(item), kind: item.kind } });
    if (item.width && item.height && item.kind !== "audio") slot.style.aspectRatio = `${item.width} / ${item.height}`;
    figures.show(slot, item);
    return slot;
  };

  const cellNode = (cell, prompt, column, chosen) => {
    const where = `${column.label}, prompt ${cell.row + 1}`;
    const parts = [];
    for (const item of cell.items || []) parts.push(mediaSlot(item));
    const figures = [h("span", { class: `mg-badge mg-badge--${TONES[cell.status] || ""} mg-compare-status` }, cell.status)];
    figures.push(h("span", { class: "mg-compare-credits" },
      cell.credits != null ? credits(cell.credits) : cell.estimate != null ? `est. ${credits(cell.estimate)}` : ""));
    if (cell.latency_s != null) figures.push(h("span", { class: "mg-muted mg-compare-latency" }, `${formatNumber(cell.latency_s)} s`));
    parts.push(h("div", { class: "mg-row" }, ...figures));
    if (cell.error_code) {
      parts.push(h("div", { class: "mg-error mg-compare-error", title: cell.error_message || "" }, cell.error_code));
    }
    if (cell.status === "failed") {
      const retry = h("button", { type: "button", class: "mg-button mg-compare-retry", "aria-label": `Retry ${where}` }, "Retry");
      retry.addEventListener("click", (event) => {
        event.stopPropagation();
        retry.disabled = true;
        send({ action: "retry", row: cell.row, col: cell.col });
      });
      parts.push(retry);
    }
    if (cell.status === "completed") {
      const pick = h("button", { type: "button", class: "mg-button mg-compare-pick", "aria-pressed": chosen ? "true" : "false",
        "aria-label": `Choose ${where}` }, chosen ? "★ Chosen" : "Choose");
      pick.addEventListener("click", () => send({ action: "choose", row: cell.row, col: cell.col }));
      parts.push(pick);
    }
    return h("td", { class: `mg-compare-cell${chosen ? " mg-compare-cell--chosen" : ""}`,
      dataset: { row: cell.row, col: cell.col, status: cell.status } }, ...parts);
  };

  const renderAll = () => {
    const prompts = model.get("prompts") || [];
    const columns = model.get("columns") || [];
    const cells = model.get("cells") || [];
    const chosen = model.get("chosen") || {};
    figures.reset(new Set(cells.flatMap((cell) => (cell.items || []).map((item) => item.key))));
    const at = (r, c) => cells[r * columns.length + c];
    const spent = (list) => list.reduce((sum, cell) => sum + (cell.credits || 0), 0);
    const head = h("tr", {}, h("th", { scope: "col" }, "Prompt"),
      ...columns.map((column) => h("th", { scope: "col", class: "mg-compare-column" },
        h("div", {}, column.label), column.settings_text ? h("div", { class: "mg-muted" }, column.settings_text) : null)),
      h("th", { scope: "col" }, "Row total"));
    const rows = prompts.map((prompt, r) => {
      const rowCells = columns.map((_, c) => at(r, c));
      return h("tr", {}, h("th", { scope: "row", class: "mg-compare-prompt", title: prompt }, prompt),
        ...rowCells.map((cell, c) => cellNode(cell, prompt, columns[c], chosen[String(r)] === c)),
        h("td", { class: "mg-muted mg-compare-rowtotal" }, credits(spent(rowCells))));
    });
    const foot = h("tr", {}, h("th", { scope: "row" }, "Column total"),
      ...columns.map((_, c) => h("td", { class: "mg-muted mg-compare-coltotal" }, credits(spent(prompts.map((__, r) => at(r, c)))))),
      h("td", { class: "mg-compare-spent" }, credits(spent(cells))));
    table.replaceChildren(h("thead", {}, head), h("tbody", {}, ...rows), h("tfoot", {}, foot));

    const phase = model.get("phase");
    const price = model.get("total");
    const waiting = cells.filter((cell) => cell.status === "priced");
    const toRun = waiting.reduce((sum, cell) => sum + (cell.estimate || 0), 0);
    const partial = waiting.length && waiting.length < cells.length ? ` · Run: ${credits(toRun)}` : "";
    total.textContent = phase === "estimating" ? "Pricing…" : price == null ? "Some cells have no price" : `Total ${credits(price)}${partial}`;
    run.disabled = phase !== "ready" || !waiting.length;
    run.textContent = phase === "running" ? "Running…" : "Run";
    forecast.textContent = model.get("forecast_text") || "";
    blocked.textContent = model.get("blocked_reason") || "";
  };
  const EVENTS = "change:cells change:columns change:prompts change:chosen change:phase change:total change:forecast_text change:blocked_reason";
  renderAll();
  model.on(EVENTS, renderAll);
  return () => {
    figures.dispose();
    banner.dispose();
    model.off(EVENTS, renderAll);
  };
}

export default { render };
