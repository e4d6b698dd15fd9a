// Compare: prompts x settings as a table. The total price and forecast sit above it with the
// Run button; cells fill in as jobs end, media fetched only when a cell scrolls into view.
// A finished cell can be made its row's winner and rated 1-5 (grid.choices in Python). Buttons
// add a column, run a row or a column again and export the HTML report.
import { formatCredits as credits, formatNumber, type MediaItem } from '../format';
import type { RenderProps } from '../model';
import { echo, errorBanner, h, lazyFigures, listen, styled } from '../shared';

const TONES: Record<string, string> = {
  completed: 'ok',
  failed: 'bad',
  invalid: 'bad',
  pending: 'warn',
  submitting: 'warn',
  queued: 'warn'
};

function render({ model, el, experimental }: RenderProps) {
  const send = content => model.send(content);
  const total = h('span', { class: 'mg-compare-total', 'aria-live': 'polite' });
  const forecast = h('span', { class: 'mg-muted mg-compare-forecast' });
  const run = h(
    'button',
    { type: 'button', class: 'mg-button mg-button--primary mg-compare-run' },
    'Run'
  );
  const blocked = h('span', { class: 'mg-muted mg-compare-blocked', role: 'status' });
  run.addEventListener('click', () => {
    run.disabled = true;
    send({ action: 'run' });
  });
  const columnInput = h('input', {
    type: 'text',
    class: 'mg-input mg-compare-newcolumn',
    'aria-label': 'Model for a new column',
    placeholder: 'model id, or {"model": …}'
  });
  const addColumn = h(
    'button',
    { type: 'button', class: 'mg-button mg-compare-addcolumn' },
    'Add column'
  );
  addColumn.addEventListener('click', () => {
    if (!columnInput.value.trim()) {
      columnInput.focus();
      return;
    }
    send({ action: 'add_column', setting: columnInput.value });
    columnInput.value = '';
  });
  const exportInput = h('input', {
    type: 'text',
    class: 'mg-input mg-compare-exportname',
    'aria-label': 'Report file name',
    value: 'compare-report.html'
  });
  const exportButton = h(
    'button',
    { type: 'button', class: 'mg-button mg-compare-export' },
    'Export HTML'
  );
  exportButton.addEventListener('click', () => send({ action: 'export', path: exportInput.value }));
  const exported = h('span', { class: 'mg-muted mg-compare-exported', role: 'status' });
  const tools = h(
    'div',
    { class: 'mg-row mg-compare-tools' },
    columnInput,
    addColumn,
    exportInput,
    exportButton,
    exported
  );
  const banner = errorBanner(model);
  const table = h('table', { class: 'mg-compare-table' });
  const scroller = h('div', { class: 'mg-compare-scroll' }, table);
  el.append(
    h(
      'div',
      { class: 'mg-root mg-card mg-stack mg-compare' },
      h(
        'div',
        { class: 'mg-row' },
        h('span', { class: 'mg-title' }, 'Compare'),
        total,
        run,
        blocked
      ),
      forecast,
      tools,
      banner.node,
      scroller
    )
  );

  const figures = lazyFigures(experimental, {
    place: (slot, figure) => slot.replaceChildren(figure.node),
    options: () => ({ caption: false })
  });
  const mediaSlot = (item: MediaItem) => {
    const slot = h('div', {
      class: 'mg-compare-media',
      dataset: { item: JSON.stringify(item), kind: item.kind }
    });
    if (item.width && item.height && item.kind !== 'audio')
      slot.style.aspectRatio = `${item.width} / ${item.height}`;
    figures.show(slot, item);
    return slot;
  };

  const cellNode = (cell, prompt, column, chosen, rating) => {
    const where = `${column.label}, prompt ${cell.row + 1}`;
    const parts: HTMLElement[] = [];
    for (const item of cell.items || []) parts.push(mediaSlot(item));
    const figures = [
      h(
        'span',
        { class: `mg-badge mg-badge--${TONES[cell.status] || ''} mg-compare-status` },
        cell.status
      )
    ];
    figures.push(
      h(
        'span',
        { class: 'mg-compare-credits' },
        cell.credits != null
          ? credits(cell.credits)
          : cell.estimate != null
            ? `est. ${credits(cell.estimate)}`
            : ''
      )
    );
    if (cell.latency_s != null)
      figures.push(
        h('span', { class: 'mg-muted mg-compare-latency' }, `${formatNumber(cell.latency_s)} s`)
      );
    parts.push(h('div', { class: 'mg-row' }, ...figures));
    if (cell.status === 'pending' && cell.rate_note) {
      parts.push(
        h('div', { class: 'mg-muted mg-compare-rate-note', role: 'status' }, cell.rate_note)
      );
    }
    if (cell.error_code) {
      parts.push(
        h(
          'div',
          { class: 'mg-error mg-compare-error', title: cell.error_message || '' },
          cell.error_code
        )
      );
    }
    if (cell.status === 'failed') {
      const retry = h(
        'button',
        { type: 'button', class: 'mg-button mg-compare-retry', 'aria-label': `Retry ${where}` },
        'Retry'
      );
      retry.addEventListener('click', event => {
        event.stopPropagation();
        retry.disabled = true;
        send({ action: 'retry', row: cell.row, col: cell.col });
      });
      parts.push(retry);
    }
    if (cell.status === 'completed') {
      const stars = h(
        'div',
        { class: 'mg-compare-rate', role: 'group', 'aria-label': `Rating, ${where}` },
        ...[1, 2, 3, 4, 5].map(n => {
          const star = h(
            'button',
            {
              type: 'button',
              class: 'mg-compare-star',
              'aria-pressed': n <= rating ? 'true' : 'false',
              'aria-label': `Rate ${n} of 5, ${where}`
            },
            n <= rating ? '★' : '☆'
          );
          star.addEventListener('click', () =>
            send({ action: 'rate', row: cell.row, col: cell.col, stars: n })
          );
          return star;
        })
      );
      parts.push(stars);
      const pick = h(
        'button',
        {
          type: 'button',
          class: 'mg-button mg-compare-pick',
          'aria-pressed': chosen ? 'true' : 'false',
          'aria-label': `Choose ${where}`
        },
        chosen ? '★ Chosen' : 'Choose'
      );
      pick.addEventListener('click', () =>
        send({ action: 'choose', row: cell.row, col: cell.col })
      );
      parts.push(pick);
    }
    return h(
      'td',
      {
        class: `mg-compare-cell${chosen ? ' mg-compare-cell--chosen' : ''}`,
        dataset: { row: cell.row, col: cell.col, status: cell.status }
      },
      ...parts
    );
  };

  // The table's skeleton is rebuilt only when the rows or columns change; a cell is redrawn
  // only when what it shows changes, so a playing video or a focused button stays put while
  // other jobs finish.
  let shape = '';
  let drawn = new Map(); // "r,c" -> {sig, node}
  let rowTotals: HTMLElement[] = [];
  let colTotals: HTMLElement[] = [];
  const spentNode = h('td', { class: 'mg-compare-spent' });
  const spent = list => list.reduce((sum, cell) => sum + (cell.credits || 0), 0);

  let rerunButtons: { node: HTMLButtonElement; row?: number; col?: number }[] = [];
  const rerunButton = (target: { row?: number; col?: number }, label: string) => {
    const node = h(
      'button',
      { type: 'button', class: 'mg-button mg-compare-rerun', 'aria-label': label },
      'Re-run'
    );
    node.addEventListener('click', () => {
      node.disabled = true;
      send({ action: 'rerun', ...target });
    });
    rerunButtons.push({ node, ...target });
    return node;
  };
  const rebuild = (prompts, columns) => {
    figures.reset(new Set());
    drawn = new Map();
    rerunButtons = [];
    const head = h(
      'tr',
      {},
      h('th', { scope: 'col' }, 'Prompt'),
      ...columns.map((column, c) =>
        h(
          'th',
          { scope: 'col', class: 'mg-compare-column' },
          h('div', {}, column.label),
          column.settings_text ? h('div', { class: 'mg-muted' }, column.settings_text) : null,
          rerunButton({ col: c }, `Re-run column ${column.label}`)
        )
      ),
      h('th', { scope: 'col' }, 'Row total')
    );
    rowTotals = prompts.map(() => h('td', { class: 'mg-muted mg-compare-rowtotal' }));
    colTotals = columns.map(() => h('td', { class: 'mg-muted mg-compare-coltotal' }));
    const rows = prompts.map((prompt, r) =>
      h(
        'tr',
        {},
        h(
          'th',
          { scope: 'row', class: 'mg-compare-prompt', title: prompt },
          h('div', {}, prompt),
          rerunButton({ row: r }, `Re-run row ${r + 1}`)
        ),
        ...columns.map((_, c) => {
          const node = h('td', { class: 'mg-compare-cell' });
          drawn.set(`${r},${c}`, { sig: '', node });
          return node;
        }),
        rowTotals[r]
      )
    );
    const foot = h('tr', {}, h('th', { scope: 'row' }, 'Column total'), ...colTotals, spentNode);
    table.replaceChildren(h('thead', {}, head), h('tbody', {}, ...rows), h('tfoot', {}, foot));
  };

  const renderAll = () => {
    const prompts = model.get('prompts') || [];
    const columns = model.get('columns') || [];
    const cells = model.get('cells') || [];
    const chosen = model.get('chosen') || {};
    const ratings = model.get('ratings') || {};
    const nowShape = JSON.stringify([prompts, columns]);
    if (nowShape !== shape) {
      shape = nowShape;
      rebuild(prompts, columns);
    }
    const at = (r, c) => cells[r * columns.length + c];
    prompts.forEach((prompt, r) =>
      columns.forEach((column, c) => {
        const cell = at(r, c);
        if (!cell) return;
        const on = chosen[String(r)] === c;
        const rating = ratings[`${r},${c}`] || 0;
        const sig = JSON.stringify([cell, on, rating]);
        const old = drawn.get(`${r},${c}`);
        if (old.sig === sig) return;
        const node = cellNode(cell, prompt, column, on, rating);
        old.node.replaceWith(node);
        drawn.set(`${r},${c}`, { sig, node });
      })
    );
    rowTotals.forEach((node, r) => {
      node.textContent = credits(spent(columns.map((_, c) => at(r, c) || {})));
    });
    colTotals.forEach((node, c) => {
      node.textContent = credits(spent(prompts.map((_, r) => at(r, c) || {})));
    });
    spentNode.textContent = credits(spent(cells));

    const phase = model.get('phase');
    const price = model.get('total');
    const waiting = cells.filter(cell => cell.status === 'priced');
    const toRun = waiting.reduce((sum, cell) => sum + (cell.estimate || 0), 0);
    const partial =
      waiting.length && waiting.length < cells.length ? ` · Run: ${credits(toRun)}` : '';
    total.textContent =
      phase === 'estimating'
        ? 'Pricing…'
        : price == null
          ? 'Some cells have no price'
          : `Total ${credits(price)}${partial}`;
    run.disabled = phase !== 'ready' || !waiting.length;
    run.textContent = phase === 'running' ? 'Running…' : 'Run';
    forecast.textContent = model.get('forecast_text') || '';
    blocked.textContent = model.get('blocked_reason') || '';
    exported.textContent = model.get('exported') || '';
    const settled = phase === 'ready' || phase === 'done';
    for (const { node, row, col } of rerunButtons) {
      const again = cells.some(
        cell =>
          (row === undefined || cell.row === row) &&
          (col === undefined || cell.col === col) &&
          (cell.status === 'completed' || cell.status === 'failed')
      );
      node.disabled = !settled || !again;
    }
  };
  const EVENTS =
    'change:cells change:columns change:prompts change:chosen change:ratings change:exported change:phase change:total change:forecast_text change:blocked_reason';
  renderAll();
  const unlisten = listen(model, { [EVENTS]: renderAll });
  const unecho = echo(model, ['chosen', 'ratings']);
  return () => {
    figures.dispose();
    banner.dispose();
    unlisten();
    unecho();
  };
}

export default styled({ render });
