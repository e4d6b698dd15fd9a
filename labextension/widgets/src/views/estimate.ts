// Live estimate and the Submit button (disabled, with the reason, when it cannot go through).
import { InstantPrice, onFormEdit, type FormEdit } from '../choicePrices';
import { formatNumber } from '../format';
import type { RenderProps } from '../model';
import { follow, h, listen, styled } from '../shared';

function render({ model, el }: RenderProps) {
  const figures = h('dl', { class: 'mg-estimate-figures' });
  const state = h('div', { class: 'mg-muted', 'aria-live': 'polite' });
  const reason = h('div', {
    class: 'mg-estimate-reason',
    id: `mg-why-${Math.random().toString(36).slice(2, 8)}`,
    'aria-live': 'polite'
  });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'mg-button mg-button--primary mg-submit',
      'aria-describedby': reason.id
    },
    'Submit'
  );
  const banner = h('div', { class: 'mg-error', role: 'alert' });
  el.append(
    h(
      'div',
      { class: 'mg-root mg-card mg-stack mg-estimate' },
      h('div', { class: 'mg-title' }, 'Estimate'),
      state,
      figures,
      h('div', { class: 'mg-row' }, button, reason),
      banner
    )
  );

  // Blocked, the button is aria-disabled rather than disabled: a disabled button drops the
  // keyboard focus to the page, and the next Tab would start again from the top.
  let clicked = false; // until the kernel answers, a second click does nothing
  let blocked = true;
  const setBlocked = value => {
    blocked = value;
    button.setAttribute('aria-disabled', value ? 'true' : 'false');
  };
  button.addEventListener('click', () => {
    if (clicked || blocked) return;
    clicked = true;
    setBlocked(true);
    model.set(
      'click',
      (crypto.randomUUID && crypto.randomUUID()) || `${Date.now()}-${Math.random()}`
    );
    model.save_changes();
  });

  // one <div> per row (allowed inside <dl>): the layout holds whatever the host page does to dt/dd
  const row = (label: string, value: string, cls?: string) => [
    h('div', { class: 'mg-estimate-row' }, h('dt', {}, label), h('dd', { class: cls }, value))
  ];

  // The provisional price (computed in the kernel from the catalog's price tables) shows the
  // moment a field changes; the service's estimate replaces it, and wins where they differ.
  const provisionalRows = prov => [
    ...row(
      'List price',
      prov.credits != null ? `≈ ${formatNumber(prov.credits)} credits` : `unknown: ${prov.unknown}`,
      'mg-estimate-price'
    ),
    ...(prov.credits_after_discount != null
      ? row('After discount', `≈ ${formatNumber(prov.credits_after_discount)} credits`)
      : []),
    ...(prov.billable_duration_seconds != null
      ? row('Billed duration', `${formatNumber(prov.billable_duration_seconds)} s`)
      : [])
  ];
  const differenceRows = (prov, est) => {
    if (prov.credits == null || est.credits == null || prov.credits === est.credits) return [];
    const delta = Math.round((est.credits - prov.credits) * 100) / 100;
    const text = `${formatNumber(prov.credits)} credits from the catalog; the service's ${formatNumber(est.credits)} credits apply (${delta > 0 ? '+' : ''}${formatNumber(delta)})`;
    return row('Local price', text, 'mg-estimate-diff');
  };

  // A priced choice's price, shown from the moment the user makes it until the kernel's
  // answer to that edit comes in (see ``InstantPrice``).
  const instant = new InstantPrice();
  const onEdit = (edit: FormEdit) => {
    if (instant.edit(edit, model.get('choice_prices') || {})) update();
  };
  const onKernel = () => {
    if (instant.kernel(model.get('choice_prices') || {})) update();
  };

  const update = () => {
    const est = model.get('estimate') || {};
    const shown = instant.shown;
    const priced = shown === 'unpriced' ? {} : shown;
    const prov = priced || model.get('provisional') || {};
    const status = shown ? 'estimating' : model.get('status');
    const provisional = status === 'estimating' && (prov.credits != null || Boolean(prov.unknown));
    state.textContent = provisional
      ? "Provisional, from the catalog's prices: confirming with the service…"
      : ({ idle: '', estimating: 'Estimating…', ready: '', error: '' }[status] ?? '');
    figures.classList.toggle('mg-stale', status === 'estimating');
    figures.classList.toggle('mg-provisional', provisional);
    figures.replaceChildren();
    if (provisional) {
      figures.append(...provisionalRows(prov));
    } else if (est.credits !== undefined) {
      figures.append(
        ...row('List price', `${formatNumber(est.credits)} credits`),
        ...(est.discount_percent ? row('Discount', `${formatNumber(est.discount_percent)} %`) : []),
        ...row(
          'After discount',
          `${formatNumber(est.credits_after_discount)} credits`,
          'mg-estimate-price'
        ),
        ...(est.billable_duration_seconds != null
          ? row('Billed duration', `${formatNumber(est.billable_duration_seconds)} s`)
          : []),
        ...row('Balance', `${formatNumber(est.balance)} credits`),
        ...row(
          'Allowed',
          est.allowed === false ? 'no' : 'yes',
          est.allowed === false ? 'mg-bad' : 'mg-ok'
        ),
        ...row(
          'Affordable',
          est.can_afford === false ? 'no' : 'yes',
          est.can_afford === false ? 'mg-bad' : 'mg-ok'
        ),
        ...(status === 'ready' ? differenceRows(prov, est) : [])
      );
    }
    const why = model.get('blocked_reason');
    const submitting = model.get('submitting');
    reason.textContent = why;
    clicked = submitting;
    setBlocked(Boolean(why) || submitting);
    button.textContent = submitting ? 'Submitting…' : 'Submit';
    banner.textContent = model.get('error') || '';
  };
  const unfollow = follow(
    model,
    [
      'estimate',
      'provisional',
      'status',
      'blocked_reason',
      'submitting',
      'error',
      'submitted_count'
    ],
    update
  );
  const unlisten = listen(model, { 'change:choice_prices': onKernel });
  const unsubscribe = onFormEdit(() => model.get('form_token') || '', onEdit);
  return () => {
    unsubscribe();
    unlisten();
    unfollow();
  };
}

export default styled({ render });
