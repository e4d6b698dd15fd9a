// A table's plan: the total, rows and credits per model and mode, the forecast, the first rows.
import { formatNumber, plural } from '../format';
import type { RenderProps } from '../model';
import { h, listen, styled, type Child } from '../shared';

function table(caption: string, head: [string, boolean?][], rows: Child, cls: string) {
  return h(
    'table',
    { class: `mg-plan-table ${cls}` },
    h('caption', { class: 'mg-muted' }, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map(([text, num]) => h('th', { scope: 'col', class: num ? 'mg-num' : '' }, text))
      )
    ),
    h('tbody', {}, rows)
  );
}

function render({ model, el }: RenderProps) {
  const root = h('div', {
    class: 'mg-root mg-card mg-stack mg-plan',
    role: 'region',
    'aria-label': 'Table plan'
  });
  el.append(root);

  const update = () => {
    const rows = model.get('rows');
    const skipped = model.get('skipped');
    const summary = h(
      'div',
      { class: 'mg-row' },
      h('span', { class: 'mg-title' }, 'Table plan'),
      h(
        'span',
        { class: 'mg-plan-total', 'aria-label': 'Total credits' },
        `${formatNumber(model.get('total'))} credits`
      ),
      h('span', { class: 'mg-plan-rows' }, `for ${plural(rows, 'row')}`),
      skipped
        ? h(
            'span',
            { class: 'mg-badge mg-badge--warn mg-plan-skipped' },
            `${plural(skipped, 'invalid row')} skipped`
          )
        : null,
      model.get('run_id')
        ? h(
            'span',
            { class: 'mg-muted mg-plan-run-id' },
            'run_id ',
            h('code', {}, model.get('run_id'))
          )
        : null
    );

    const counts = table(
      'Rows and credits per model and mode',
      [['Model'], ['Mode'], ['Rows', true], ['Credits', true]],
      (model.get('counts') || []).map(c =>
        h(
          'tr',
          {},
          h('td', {}, c.model),
          h('td', {}, c.mode || '–'),
          h('td', { class: 'mg-num' }, formatNumber(c.rows)),
          h('td', { class: 'mg-num' }, formatNumber(c.credits))
        )
      ),
      'mg-plan-counts'
    );

    const f = model.get('forecast') || {};
    const forecast = h(
      'div',
      { class: 'mg-plan-forecast', title: f.summary || '' },
      f.enough
        ? [
            h('span', {}, `About ${f.p50} (p90 ${f.p90})`),
            f.failures === null || f.failures === undefined
              ? null
              : h('span', { class: 'mg-muted' }, ` · ${formatNumber(f.failures)} failures expected`)
          ]
        : h(
            'span',
            { class: 'mg-muted' },
            `Too little history for a time forecast: ${f.summary || 'none yet'}`
          )
    );

    const sample = table(
      'First rows',
      [['Row'], ['Request'], ['Estimate', true]],
      (model.get('sample') || []).map(r =>
        h(
          'tr',
          { class: r.valid ? '' : 'mg-plan-row--invalid' },
          h('th', { scope: 'row' }, r.label),
          h('td', {}, r.summary),
          h('td', { class: 'mg-num' }, r.valid ? formatNumber(r.estimate) : 'skipped')
        )
      ),
      'mg-plan-sample'
    );

    const invalid = model.get('invalid') || [];
    const skippedList = invalid.length
      ? h(
          'div',
          { class: 'mg-plan-invalid', role: 'group', 'aria-label': 'Invalid rows skipped' },
          h('div', { class: 'mg-muted' }, 'Skipped (invalid):'),
          h(
            'ul',
            {},
            invalid.map(r => h('li', {}, h('code', {}, r.label), `: ${r.problem}`))
          )
        )
      : null;
    const running = model.get('progress') || '';
    const progress = running
      ? h('div', { class: 'mg-plan-progress', role: 'status' }, running)
      : null;
    const banner = h('div', { class: 'mg-error', role: 'alert' }, model.get('error') || '');
    root.replaceChildren(
      ...[summary, progress, counts, forecast, sample, skippedList, banner].filter(
        node => node !== null
      )
    );
  };
  update();
  const events =
    'change:total change:rows change:skipped change:run_id change:counts change:forecast change:sample change:invalid change:error change:progress';
  return listen(model, { [events]: update });
}

export default styled({ render });
