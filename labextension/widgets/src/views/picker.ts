// Model picker: kind filter, search box and a keyboard-navigable list of models.
import type { RenderProps } from '../model';
import { h, keptNodes, listen, placeChildren, styled } from '../shared';

const KINDS = [
  ['', 'All'],
  ['image', 'Image'],
  ['video', 'Video'],
  ['audio', 'Audio']
];

function render({ model, el }: RenderProps) {
  const uid = Math.random().toString(36).slice(2, 8);
  const kindGroup = h('div', { class: 'mg-row', role: 'radiogroup', 'aria-label': 'Media kind' });
  const search = h('input', {
    type: 'search',
    class: 'mg-input',
    placeholder: 'Search models…',
    'aria-label': 'Search models',
    id: `mg-search-${uid}`
  });
  const list = h('div', {
    class: 'mg-picker-list',
    role: 'listbox',
    tabindex: 0,
    'aria-label': 'Models'
  });
  const status = h('div', { class: 'mg-muted mg-picker-status', 'aria-live': 'polite' });
  el.append(
    h(
      'div',
      { class: 'mg-root mg-card mg-stack mg-picker' },
      h('div', { class: 'mg-title' }, 'Model'),
      kindGroup,
      search,
      status,
      list
    )
  );

  // A radio group: one Tab stop (the checked chip), arrow keys move and choose. The chips are
  // made once and updated in place, so the focused one is never replaced under the user.
  const chips = KINDS.map(([value, label]) =>
    h(
      'button',
      {
        type: 'button',
        role: 'radio',
        class: 'mg-button mg-chip',
        dataset: { kind: value },
        onclick: () => chooseKind(value)
      },
      label
    )
  );
  kindGroup.append(...chips);
  const chooseKind = value => {
    model.set('kind', value);
    model.save_changes();
    renderKinds();
  };
  kindGroup.addEventListener('keydown', event => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    const jump = { Home: 0, End: chips.length - 1 }[event.key];
    if (step === undefined && jump === undefined) return;
    event.preventDefault();
    const current = chips.findIndex(chip => chip.dataset.kind === model.get('kind'));
    const next = jump ?? (current + (step ?? 0) + chips.length) % chips.length;
    chooseKind(chips[next].dataset.kind);
    chips[next].focus();
  });
  const renderKinds = () => {
    for (const chip of chips) {
      const checked = model.get('kind') === chip.dataset.kind;
      chip.classList.toggle('mg-chip--on', checked);
      chip.setAttribute('aria-checked', checked ? 'true' : 'false');
      chip.tabIndex = checked ? 0 : -1;
    }
  };

  const choose = id => {
    model.set('value', id);
    model.save_changes();
  };

  // One node per model, made again only when its summary changes: a re-render (the kernel's
  // answer to a filter, another view choosing) keeps the option under the pointer, so a press
  // that an answer interrupts still ends as a click (a browser drops the click when the pressed
  // element leaves the page).
  const optionNode = item => {
    const modes = item.modes.map(m => m.name).join(', ');
    return h(
      'div',
      {
        role: 'option',
        class: 'mg-picker-option',
        id: `mg-opt-${uid}-${item.id}`,
        dataset: { model: item.id, type: item.type },
        onclick: () => choose(item.id)
      },
      h(
        'div',
        { class: 'mg-row' },
        h('strong', {}, item.name),
        h('span', { class: 'mg-badge' }, item.audio_kind || item.type),
        item.price_summary ? h('span', { class: 'mg-muted' }, item.price_summary) : null
      ),
      h(
        'div',
        { class: 'mg-muted mg-picker-detail' },
        modes ? `Modes: ${modes}` : '',
        item.tiers.length ? ` · Tiers: ${item.tiers.join(', ')}` : ''
      )
    );
  };
  const optionNodes = keptNodes(optionNode, item => item.id);

  const renderList = () => {
    const options = model.get('options') || [];
    const value = model.get('value');
    status.textContent = model.get('loading')
      ? 'Loading catalog…'
      : `${options.length} model${options.length === 1 ? '' : 's'}`;
    const nodes = optionNodes(options);
    nodes.forEach((node, i) => {
      const selected = options[i].id === value;
      node.classList.toggle('mg-picker-option--on', selected);
      node.setAttribute('aria-selected', selected ? 'true' : 'false');
    });
    placeChildren(list, nodes);
    const active = list.querySelector('.mg-picker-option--on');
    if (active) list.setAttribute('aria-activedescendant', active.id);
    else list.removeAttribute('aria-activedescendant');
  };

  // Arrow keys move the selection; the list is one tab stop (listbox pattern).
  list.addEventListener('keydown', event => {
    const options = model.get('options') || [];
    if (!options.length) return;
    const index = options.findIndex(o => o.id === model.get('value'));
    let next = index;
    if (event.key === 'ArrowDown') next = Math.min(options.length - 1, index + 1);
    else if (event.key === 'ArrowUp') next = Math.max(0, index - 1);
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = options.length - 1;
    else return;
    event.preventDefault();
    choose(options[next].id);
  });

  let timer: ReturnType<typeof setTimeout> | undefined;
  search.value = model.get('query');
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      model.set('query', search.value);
      model.save_changes();
    }, 120);
  });
  const syncQuery = () => {
    if (document.activeElement !== search) search.value = model.get('query');
  };

  renderKinds();
  renderList();
  const unlisten = listen(model, {
    'change:kind': renderKinds,
    'change:options change:value change:loading': renderList,
    'change:query': syncQuery
  });
  return () => {
    clearTimeout(timer);
    unlisten();
  };
}

export default styled({ render });
