// Spend dashboard: filters, a date range, headline figures, three plots in tabs and a paged
// table sorted by its headers. The kernel computes every figure; this view draws them and sends
// back what the user chose. Built once, then updated in place, so a control keeps its focus
// and what is being typed while the kernel answers.
import type { AnyModel, RenderProps } from '../model';

/** A part of the dashboard: its node, drawn again when one of its traits changes. */
interface Part {
  node: HTMLElement;
  update: () => void;
  traits: string[];
  dispose?: () => void;
}
import { h, keptNodes, listen, placeChildren, styled, watchTheme } from '../shared';

const FILTERS = [
  ['type', 'Type'],
  ['status', 'Status'],
  ['model', 'Model']
];
const PERIODS = [
  ['D', 'Day'],
  ['W', 'Week'],
  ['M', 'Month']
];
const PLOTS = [
  ['spend_plot', 'Spend over time', 'Credits charged per period'],
  ['model_plot', 'Spend per model', 'Credits charged per model'],
  ['latency_plot', 'Latency', 'Time to finish per model']
];
const LABELS = {
  created_at: 'Created',
  type: 'Type',
  model: 'Model',
  status: 'Status',
  credits_charged: 'Credits',
  latency_s: 'Latency',
  n_outputs: 'Outputs',
  error_code: 'Error',
  prompt: 'Prompt'
};
const NUMERIC = new Set(['credits_charged', 'latency_s', 'n_outputs']);
const SEARCH_DELAY_MS = 300;

function choose(model: AnyModel, name: string, value: unknown) {
  if (model.get(name) === value) return;
  model.set(name, value);
  model.save_changes();
}

/** A labelled control: <label>Text <control></label>. */
function field(text, control) {
  return h('label', { class: 'mg-dash-field' }, h('span', { class: 'mg-muted' }, text), control);
}

function filters(model) {
  const selects = FILTERS.map(([name, text]) => {
    const select = h('select', {
      class: 'mg-dash-filter',
      'data-filter': name,
      onchange: () => choose(model, name, select.value)
    });
    return { name, select, node: field(text, select) };
  });
  const period = h(
    'select',
    { class: 'mg-dash-period', onchange: () => choose(model, 'period', period.value) },
    PERIODS.map(([value, text]) => h('option', { value }, text))
  );
  const dates = ['since', 'until'].map(name => {
    const input = h('input', {
      type: 'date',
      class: 'mg-input mg-dash-date',
      'data-bound': name,
      onchange: () => choose(model, name, input.value)
    });
    return { name, input };
  });
  const refresh = h(
    'button',
    {
      type: 'button',
      class: 'mg-button mg-dash-refresh',
      title: 'Fetch new and finished generations',
      onclick: () => model.send({ action: 'refresh' })
    },
    '↻ Refresh'
  );
  const node = h(
    'div',
    { class: 'mg-row mg-dash-filters', role: 'group', 'aria-label': 'Filters' },
    selects.map(s => s.node),
    field('Per', period),
    field('From', dates[0].input),
    field('To', dates[1].input),
    refresh
  );

  const update = () => {
    const choices = model.get('choices') || {};
    for (const { name, select } of selects) {
      const values = ['', ...(choices[name] || [])];
      const shown = Array.from(select.options, o => o.value);
      if (shown.join('\n') !== values.join('\n')) {
        select.replaceChildren(...values.map(v => h('option', { value: v }, v || 'All')));
      }
      select.value = model.get(name);
    }
    period.value = model.get('period');
    for (const { name, input } of dates)
      if (document.activeElement !== input) input.value = model.get(name);
    refresh.disabled = model.get('refreshing');
  };
  return {
    node,
    update,
    traits: ['choices', 'type', 'status', 'model', 'period', 'since', 'until', 'refreshing']
  };
}

function headline(model) {
  const node = h('div', {
    class: 'mg-row mg-dash-headline',
    role: 'group',
    'aria-label': 'Spend summary'
  });
  const update = () =>
    node.replaceChildren(
      ...(model.get('headline') || []).map(item =>
        h(
          'div',
          { class: 'mg-dash-figure' },
          h('div', { class: 'mg-muted mg-dash-figure-label' }, item.label),
          h('div', { class: 'mg-dash-figure-value' }, item.value)
        )
      )
    );
  return { node, update, traits: ['headline'] };
}

function plots(model, id) {
  const image = h('img', { class: 'mg-dash-plot' });
  const panel = h(
    'div',
    { class: 'mg-dash-plot-panel', role: 'tabpanel', id: `${id}-panel` },
    image
  );
  const tabs = PLOTS.map(([, title], index) =>
    h(
      'button',
      {
        type: 'button',
        role: 'tab',
        class: 'mg-chip mg-dash-tab',
        id: `${id}-tab-${index}`,
        'aria-controls': `${id}-panel`,
        onclick: () => choose(model, 'plot_tab', index),
        onkeydown: event => {
          const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
          if (!step) return;
          const next = (index + step + PLOTS.length) % PLOTS.length;
          choose(model, 'plot_tab', next);
          tabs[next].focus();
        }
      },
      title
    )
  );
  const node = h(
    'div',
    { class: 'mg-stack mg-dash-plots' },
    h('div', { class: 'mg-row', role: 'tablist', 'aria-label': 'Plots' }, tabs),
    panel
  );
  const update = () => {
    const shown = Math.max(0, Math.min(PLOTS.length - 1, model.get('plot_tab')));
    tabs.forEach((tab, index) => {
      tab.setAttribute('aria-selected', String(index === shown));
      tab.tabIndex = index === shown ? 0 : -1;
      tab.classList.toggle('mg-chip--on', index === shown);
    });
    const [trait, , alt] = PLOTS[shown];
    panel.setAttribute('aria-labelledby', `${id}-tab-${shown}`);
    const src = model.get(trait);
    image.alt = src ? alt : `${alt} (drawing…)`;
    if (src) image.src = src;
    else image.removeAttribute('src');
  };
  return { node, update, traits: ['plot_tab', ...PLOTS.map(([trait]) => trait)] };
}

function searchBox(model) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const send = () => {
    clearTimeout(timer);
    choose(model, 'search', input.value);
  };
  const input = h('input', {
    type: 'search',
    class: 'mg-input mg-dash-search',
    placeholder: 'Search model, prompt, id, error…',
    'aria-label': 'Search the table',
    oninput: () => {
      clearTimeout(timer);
      timer = setTimeout(send, SEARCH_DELAY_MS);
    },
    onchange: send
  });
  const update = () => {
    if (document.activeElement !== input) input.value = model.get('search');
  };
  return { node: input, update, traits: ['search'], dispose: () => clearTimeout(timer) };
}

// A header's cell and button are made once per column and kept: the kernel redraws the table
// (its answer to a sort, a page, a filter) without taking the button from under a press, and a
// click reads the order at the time it is made.
function sortHeader(model, column) {
  const button = h('button', {
    type: 'button',
    class: 'mg-dash-sort',
    'data-column': column,
    title: `Sort by ${LABELS[column] || column}`,
    onclick: () => {
      if (model.get('sort_by') === column) model.set('descending', !model.get('descending'));
      else {
        model.set('sort_by', column);
        model.set('descending', true);
      }
      model.save_changes();
    }
  });
  return h('th', { scope: 'col', class: NUMERIC.has(column) ? 'mg-num' : '' }, button);
}

function markSort(model, cell: HTMLElement, column: string) {
  const sorted = model.get('sort_by') === column;
  const descending = model.get('descending');
  cell.setAttribute('aria-sort', sorted ? (descending ? 'descending' : 'ascending') : 'none');
  const arrow = sorted ? (descending ? ' ▼' : ' ▲') : '';
  (cell.firstChild as HTMLElement).textContent = (LABELS[column] || column) + arrow;
}

function table(model) {
  const grid = h('table', { class: 'mg-plan-table mg-dash-table' });
  const previous = h(
    'button',
    {
      type: 'button',
      class: 'mg-button mg-dash-previous',
      onclick: () => choose(model, 'page', model.get('page') - 1)
    },
    '‹ Previous'
  );
  const next = h(
    'button',
    {
      type: 'button',
      class: 'mg-button mg-dash-next',
      onclick: () => choose(model, 'page', model.get('page') + 1)
    },
    'Next ›'
  );
  const label = h('span', { class: 'mg-muted mg-dash-page', 'aria-live': 'polite' });
  const node = h(
    'div',
    { class: 'mg-stack' },
    h('div', { class: 'mg-dash-table-wrap' }, grid),
    h('div', { class: 'mg-row mg-dash-pager' }, previous, label, next)
  );
  const headRow = h('tr');
  const body = h('tbody');
  grid.append(
    h('caption', { class: 'mg-visually-hidden' }, 'Generations'),
    h('thead', {}, headRow),
    body
  );
  const headers = keptNodes(
    (column: string) => sortHeader(model, column),
    column => column
  );
  const update = () => {
    const { columns = [], rows = [] } = model.get('table') || {};
    const cells = headers(columns);
    cells.forEach((cell, i) => markSort(model, cell, columns[i]));
    placeChildren(headRow, cells);
    body.replaceChildren(
      ...(rows.length
        ? rows.map(row =>
            h(
              'tr',
              {},
              row.map((cell, i) =>
                h('td', { class: NUMERIC.has(columns[i]) ? 'mg-num' : '' }, cell)
              )
            )
          )
        : [
            h(
              'tr',
              {},
              h(
                'td',
                { colspan: Math.max(1, columns.length), class: 'mg-muted' },
                'No generations match these filters.'
              )
            )
          ])
    );
    const page = model.get('page');
    label.textContent = model.get('page_label');
    previous.disabled = page <= 0;
    next.disabled = page >= model.get('page_count') - 1;
  };
  return {
    node,
    update,
    traits: ['table', 'page', 'page_count', 'page_label', 'sort_by', 'descending']
  };
}

let views = 0;

function render({ model, el }: RenderProps) {
  const id = `mg-dash-${++views}`;
  const parts: Part[] = [
    filters(model),
    headline(model),
    plots(model, id),
    searchBox(model),
    table(model)
  ];
  const status = h('div', { class: 'mg-muted mg-dash-status', role: 'status' });
  const banner = h('div', { class: 'mg-error', role: 'alert' });
  const statusPart = {
    node: h('div', {}, status, banner),
    update: () => {
      status.textContent = model.get('status_line');
      banner.textContent = model.get('error') || '';
    },
    traits: ['status_line', 'error']
  };
  parts.push(statusPart);
  el.append(
    h(
      'div',
      {
        class: 'mg-root mg-card mg-stack mediagen-spend-dashboard',
        role: 'region',
        'aria-label': 'Spend dashboard'
      },
      parts.map(part => part.node)
    )
  );
  const undo = parts.map(part => {
    part.update();
    return listen(model, { [part.traits.map(t => `change:${t}`).join(' ')]: part.update });
  });
  const unwatch = watchTheme(model);
  return () => {
    unwatch();
    for (const off of undo) off();
    for (const part of parts) if (part.dispose) part.dispose();
  };
}

export default styled({ render });
