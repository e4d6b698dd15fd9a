// Credit meter: balance, member cap with its reset time, and what this session spent.
import { formatNumber } from '../format';
import type { RenderProps } from '../model';
import { follow, h, styled } from '../shared';

function render({ model, el }: RenderProps) {
  const body = h('div', { class: 'mg-row mg-meter', 'aria-live': 'polite' });
  const refresh = h(
    'button',
    {
      type: 'button',
      class: 'mg-button',
      'aria-label': 'Refresh credits',
      onclick: () => model.send({ action: 'refresh' })
    },
    '↻'
  );
  const banner = h('div', { class: 'mg-error', role: 'alert' });
  el.append(
    h(
      'div',
      { class: 'mg-root mg-card mg-stack' },
      h('div', { class: 'mg-row' }, body, refresh),
      banner
    )
  );

  const update = () => {
    const c = model.get('credits') || {};
    const parts = [
      h('span', { class: 'mg-title' }, 'Credits'),
      h(
        'span',
        { class: 'mg-meter-balance' },
        c.balance === undefined ? '…' : `${formatNumber(c.balance)} available`
      )
    ];
    if (c.reserved)
      parts.push(h('span', { class: 'mg-muted' }, `${formatNumber(c.reserved)} reserved`));
    const cap = c.member_limit;
    if (cap && cap.limit) {
      const share = Math.min(1, (cap.used || 0) / cap.limit);
      const reset = cap.resets_at ? new Date(cap.resets_at).toLocaleString() : '';
      parts.push(
        h('span', {}, `Member cap ${formatNumber(cap.used)} / ${formatNumber(cap.limit)}`),
        h(
          'div',
          {
            class: 'mg-meter-bar',
            role: 'meter',
            'aria-label': 'Member cap used',
            'aria-valuemin': 0,
            'aria-valuemax': cap.limit,
            'aria-valuenow': cap.used
          },
          h('div', {
            class: 'mg-meter-fill' + (share > 0.8 ? ' mg-meter-fill--high' : ''),
            style: `width:${(share * 100).toFixed(1)}%`
          })
        ),
        h('span', { class: 'mg-muted' }, reset ? `resets ${reset}` : '')
      );
    }
    for (const limit of model.get('limits') || []) {
      const share = limit.limit > 0 ? Math.min(1, limit.spent / limit.limit) : 1;
      parts.push(
        h(
          'span',
          { class: 'mg-meter-limit' },
          `${limit.name} ${formatNumber(limit.spent)} / ${formatNumber(limit.limit)}`
        ),
        h(
          'div',
          {
            class: 'mg-meter-bar',
            role: 'meter',
            'aria-label': `${limit.name} used`,
            'aria-valuemin': 0,
            'aria-valuemax': limit.limit,
            'aria-valuenow': limit.spent
          },
          h('div', {
            class: 'mg-meter-fill' + (share > 0.8 ? ' mg-meter-fill--high' : ''),
            style: `width:${(share * 100).toFixed(1)}%`
          })
        )
      );
    }
    const count = model.get('session_count');
    parts.push(
      h(
        'span',
        { class: 'mg-muted mg-meter-session' },
        `This session: ${formatNumber(model.get('session_spend'))} credits on ${count} generation${count === 1 ? '' : 's'}`
      )
    );
    body.replaceChildren(...parts);
    refresh.disabled = model.get('refreshing');
    banner.textContent = model.get('error') || '';
  };
  return follow(
    model,
    ['credits', 'session_spend', 'session_count', 'refreshing', 'error', 'limits'],
    update
  );
}

export default styled({ render });
