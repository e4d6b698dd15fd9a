// Gallery: one widget, many generations; media fetched only when a card scrolls into view.
// Images open enlarged in a dialog; audio gets full-width controls; a card can be selected
// (gallery.selected in Python).
import {
  credentialsLine,
  formatNumber,
  statusTone,
  type Credentials,
  type MediaItem
} from '../format';
import {
  countText,
  KIND_FILTERS,
  nextSelection,
  SEARCH_DELAY_MS,
  shownKeys,
  slotAspectRatio,
  slotLabel,
  STATUS_FILTERS,
  type FilterChoices,
  type GalleryEntry
} from '../galleryRules';
import type { RenderProps } from '../model';
import { h, keptNodes, lazyFigures, listen, placeChildren, styled } from '../shared';

function lightbox() {
  const image = h('img', { class: 'mg-lightbox-image', alt: '' });
  const close = h(
    'button',
    { type: 'button', class: 'mg-button mg-lightbox-close', 'aria-label': 'Close enlarged image' },
    'Close'
  );
  const dialog = h(
    'dialog',
    { class: 'mg-root mg-lightbox', 'aria-label': 'Enlarged image' },
    close,
    image
  );
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('click', event => {
    if (event.target === dialog) dialog.close();
  });
  return {
    node: dialog,
    open(url: string, label: string) {
      image.src = url;
      image.alt = label;
      dialog.showModal();
      close.focus();
    }
  };
}

// The "CR" mark content credentials are known by; what they say is its name and tooltip.
function credentialsBadge(credentials: Credentials | null | undefined) {
  const said = credentialsLine(credentials);
  if (!said) return null;
  return h(
    'span',
    {
      class: `mg-badge mg-badge--${said.tone} mg-gallery-credentials`,
      role: 'img',
      'aria-label': said.text,
      title: said.text,
      dataset: { status: credentials?.status }
    },
    'CR'
  );
}

function render({ model, el, experimental }: RenderProps) {
  const uid = Math.random().toString(36).slice(2, 8);
  const select = (name: string, label: string, options: FilterChoices) => {
    const node = h(
      'select',
      { id: `mg-${uid}-${name}`, 'aria-label': label },
      ...options.map(([value, text]) => h('option', { value }, text))
    );
    node.value = model.get(name);
    node.addEventListener('change', () => {
      model.set(name, node.value);
      model.save_changes();
    });
    return node;
  };
  const kind = select('kind', 'Filter by kind', KIND_FILTERS);
  const status = select('status', 'Filter by status', STATUS_FILTERS);
  const search = h('input', {
    type: 'search',
    class: 'mg-input',
    placeholder: 'Search prompts…',
    'aria-label': 'Search generations'
  });
  search.value = model.get('query');
  let timer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      model.set('query', search.value);
      model.save_changes();
    }, SEARCH_DELAY_MS);
  });
  const count = h('span', { class: 'mg-muted', 'aria-live': 'polite' });
  const grid = h('div', { class: 'mg-grid mg-gallery-grid', role: 'list' });
  const banner = h('div', { class: 'mg-error', role: 'alert' });
  const box = lightbox();
  el.append(
    h(
      'div',
      { class: 'mg-root mg-card mg-stack mg-gallery' },
      h(
        'div',
        { class: 'mg-row' },
        h('span', { class: 'mg-title' }, 'Gallery'),
        kind,
        status,
        search,
        count
      ),
      banner,
      grid,
      box.node
    )
  );

  const enlargeable = (item: MediaItem) => (element: HTMLElement, url: string) => {
    if (item.kind !== 'image') return;
    const button = h('button', {
      type: 'button',
      class: 'mg-gallery-enlarge',
      'aria-label': `Enlarge ${item.label || 'image'}`
    });
    element.replaceWith(button);
    button.append(element);
    button.addEventListener('click', () => box.open(url, item.label || 'image'));
  };

  // a figure outlives re-renders (history arriving, a filter, a selection) while its item is
  // still shown, so its media are fetched once and never revoked mid-load.
  const place = (slot: HTMLElement, figure: { node: HTMLElement }) => {
    if (slot.firstChild === figure.node) return;
    slot.classList.remove('mg-placeholder');
    slot.replaceChildren(figure.node);
  };
  const figures = lazyFigures(experimental, {
    place,
    options: item => ({ caption: false, onReady: enlargeable(item) })
  });

  // A card, too, outlives re-renders while its generation and its selection are unchanged: a
  // press on its Select button that a re-render interrupts still ends as a click.
  const slotsOf = new WeakMap<HTMLElement, [HTMLElement, MediaItem][]>();
  const cardNode = ({ entry, on }: { entry: GalleryEntry; on: boolean }) => {
    const tone = statusTone(entry.status);
    const slots = entry.items.map(item => {
      const slot = h(
        'div',
        {
          class: 'mg-placeholder mg-gallery-slot',
          dataset: { item: JSON.stringify(item), kind: item.kind }
        },
        slotLabel(item)
      );
      const ratio = slotAspectRatio(item);
      if (ratio) slot.style.aspectRatio = ratio;
      return [slot, item] as [HTMLElement, MediaItem];
    });
    const choose = h(
      'button',
      {
        type: 'button',
        class: 'mg-button mg-gallery-select',
        'aria-pressed': on ? 'true' : 'false',
        'aria-label': `Select generation ${entry.id}`
      },
      on ? 'Selected' : 'Select'
    );
    choose.addEventListener('click', () => {
      model.set('selected_id', nextSelection(model.get('selected_id'), entry.id));
      model.save_changes();
    });
    const card = h(
      'div',
      {
        class: `mg-card mg-stack mg-gallery-card${on ? ' mg-gallery-card--on' : ''}`,
        role: 'listitem',
        dataset: { id: entry.id, status: entry.status }
      },
      slots.map(([slot]) => slot),
      entry.error
        ? h('div', { class: 'mg-error' }, `${entry.error.code}: ${entry.error.message}`)
        : null,
      h(
        'div',
        { class: 'mg-row' },
        h('span', { class: `mg-badge mg-badge--${tone}` }, entry.status),
        h('strong', {}, entry.model),
        entry.credits_charged != null
          ? h(
              'span',
              { class: 'mg-muted mg-gallery-credits' },
              `${formatNumber(entry.credits_charged)} cr`
            )
          : null,
        credentialsBadge(entry.credentials)
      ),
      entry.settings_text
        ? h('div', { class: 'mg-muted mg-gallery-settings' }, entry.settings_text)
        : null,
      h('div', { class: 'mg-muted mg-gallery-prompt', title: entry.prompt }, entry.prompt),
      h('div', { class: 'mg-row' }, choose)
    );
    slotsOf.set(card, slots);
    return card;
  };
  const cardNodes = keptNodes(cardNode, ({ entry }) => entry.id);

  const renderEntries = () => {
    const entries: GalleryEntry[] = model.get('entries') || [];
    figures.reset(shownKeys(entries));
    const selected = model.get('selected_id');
    count.textContent = countText(entries.length, model.get('total'));
    const cards = cardNodes(entries.map(entry => ({ entry, on: entry.id === selected })));
    // the slots of every card shown, kept or new: filled now, or once they scroll into view
    for (const card of cards) {
      for (const [slot, item] of slotsOf.get(card) ?? []) figures.show(slot, item);
    }
    placeChildren(grid, cards);
  };
  const renderError = () => {
    banner.textContent = model.get('error') || '';
  };
  renderEntries();
  renderError();
  const unlisten = listen(model, {
    'change:entries change:total change:selected_id': renderEntries,
    'change:error': renderError
  });
  return () => {
    clearTimeout(timer);
    figures.dispose();
    if (box.node.open) box.node.close();
    unlisten();
  };
}

export default styled({ render });
