// The studio: one anywidget that lays out its parts in one CSS grid (mediagen.css, .mg-studio).
// Each part (meter, picker, form, estimate, job cards, gallery) is an anywidget of its own,
// drawn into its slot through anywidget's host (`host.getWidget`), so the studio needs no
// container widget and renders wherever anywidget does (JupyterLab, Notebook 7, marimo...).
import type { RenderProps } from '../model';
import { echo, h, listen, styled } from '../shared';

// A part drawn into `slot`, undone when `signal` aborts (the studio's view goes, or the part
// leaves the studio).
async function draw(host, ref, slot, signal) {
  const widget = await host.getWidget(ref);
  if (signal.aborted) return;
  await widget.render({ el: slot, signal });
}

async function render({ model, el, host, signal }: RenderProps) {
  el.classList.add('mg-studio-host'); // the container a narrow notebook's query measures
  const slot = name => h('div', { class: `mg-studio-${name}` });
  const slots = {
    meter: slot('meter'),
    picker: slot('picker'),
    form: slot('form'),
    estimate: slot('estimate'),
    gallery: slot('gallery')
  };
  const forecast = h('div', { class: 'mg-studio-forecast mg-muted', 'aria-live': 'polite' });
  const folderId = `mg-folder-${Math.random().toString(36).slice(2, 8)}`;
  const folder = h('input', { type: 'text', class: 'mg-input', id: folderId, spellcheck: 'false' });
  const save = h(
    'div',
    { class: 'mg-row mg-save-folder' },
    h('label', { for: folderId }, 'Save folder'),
    folder
  );
  const jobs = h('div', { class: 'mg-stack mg-studio-jobs' });
  el.append(
    h(
      'div',
      { class: 'mg-root mg-studio' },
      slots.meter,
      slots.picker,
      slots.form,
      slots.estimate,
      forecast,
      save,
      jobs,
      slots.gallery
    )
  );

  const drawn = new Map(); // part name or card ref -> {ref, controller}
  const place = (name, ref, node) => {
    const had = drawn.get(name);
    if (had && had.ref === ref) return;
    if (had) had.controller.abort();
    node.replaceChildren();
    if (!ref) {
      drawn.delete(name);
      return;
    }
    const controller = new AbortController();
    signal?.addEventListener('abort', () => controller.abort(), { once: true });
    drawn.set(name, { ref, controller });
    draw(host, ref, node, controller.signal).catch(err => {
      node.textContent = `This part could not be shown: ${err && err.message ? err.message : err}`;
    });
  };

  const renderParts = () => {
    const parts = model.get('parts') || {};
    for (const [name, node] of Object.entries(slots)) place(name, parts[name] || '', node);
  };
  // newest first; a card keeps its node (a playing video plays on) as others arrive
  const cardNodes = new Map();
  const renderCards = () => {
    const refs = model.get('card_refs') || [];
    for (const [ref, node] of cardNodes) {
      if (refs.includes(ref)) continue;
      drawn.get(ref)?.controller.abort();
      drawn.delete(ref);
      node.remove();
      cardNodes.delete(ref);
    }
    let before = jobs.firstChild;
    for (const ref of refs) {
      let node = cardNodes.get(ref);
      if (!node) {
        node = h('div', { class: 'mg-studio-card' });
        cardNodes.set(ref, node);
        place(ref, ref, node);
      }
      if (node !== before) jobs.insertBefore(node, before);
      before = node.nextSibling;
    }
  };
  const renderForecast = () => {
    forecast.textContent = model.get('forecast') || '';
  };
  const renderFolder = () => {
    if (document.activeElement !== folder) folder.value = model.get('save_folder') || '';
  };
  // sent as the user types (a pause of 200 ms), and at once when the field is left: a Save
  // clicked right after typing writes to the folder typed
  let typing: ReturnType<typeof setTimeout> | undefined;
  const sendFolder = () => {
    clearTimeout(typing);
    if (model.get('save_folder') === folder.value) return;
    model.set('save_folder', folder.value);
    model.save_changes();
  };
  folder.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(sendFolder, 200);
  });
  folder.addEventListener('change', sendFolder);

  renderParts();
  renderCards();
  renderForecast();
  renderFolder();
  const unlisten = listen(model, {
    'change:parts': renderParts,
    'change:card_refs': renderCards,
    'change:forecast': renderForecast,
    'change:save_folder': renderFolder
  });
  const unecho = echo(model, ['last_id']); // a marimo cell reading studio.last runs again
  return () => {
    clearTimeout(typing);
    unlisten();
    unecho();
    for (const { controller } of drawn.values()) controller.abort();
  };
}

export default styled({ render });
