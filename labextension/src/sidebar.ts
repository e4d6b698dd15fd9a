/**
 * The Generations sidebar: every generation of this key, newest first, live. Rows are updated
 * in place (a row is rebuilt only when its data changed), so a playing video or a focused
 * button survives the next update.
 */
import {
  caretDownEmptyIcon,
  LabIcon,
  pauseIcon,
  ReactWidget,
  refreshIcon,
  runIcon,
  Toolbar,
  ToolbarButtonComponent
} from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { mediaUrl } from './api';
import { Feed } from './feed';
import {
  costLabel,
  filterRows,
  Filters,
  mediaKind,
  modelsOf,
  NO_FILTERS,
  progressOf,
  Row,
  Snapshot
} from './model';

export interface RowActions {
  open(row: Row): void;
  insert(row: Row): void;
  copyId(row: Row): Promise<void>;
}

const FILTER_BUTTONS = [
  ['running', 'Running', 'Show the running generations only'],
  ['failed', 'Failed', 'Show the failed generations only'],
  ['today', 'Today', 'Show the generations created today (UTC) only']
] as const;

/** A select dressed as JupyterLab's own (HTMLSelect's classes and caret), kept a plain DOM
 * node so the rows' updates can change its options without a React render. */
function styledSelect(select: HTMLSelectElement): Widget {
  const wrapper = new Widget();
  wrapper.addClass('jp-HTMLSelect');
  wrapper.addClass('jp-DefaultStyle');
  wrapper.addClass('mg-lab-model-wrapper');
  wrapper.node.append(select, caretDownEmptyIcon.element({ tag: 'span', stylesheet: 'select' }));
  return wrapper;
}

/**
 * A toolbar toggle: a native button with aria-pressed, styled as the toolbar's buttons.
 * JupyterLab's ToolbarButton puts aria-pressed on its `jp-button` host element, which has no
 * button role there, and accessibility checkers reject that.
 */
class ToggleButton extends Widget {
  private _pressed = false;

  constructor(label: string, tooltip: string, onToggle: (pressed: boolean) => void) {
    super({ node: document.createElement('button') });
    const button = this.node as HTMLButtonElement;
    button.type = 'button';
    button.textContent = label;
    button.title = tooltip;
    this.addClass('jp-ToolbarButton');
    this.addClass('mg-lab-filter');
    button.setAttribute('aria-pressed', 'false');
    button.addEventListener('click', () => {
      this.pressed = !this._pressed;
      onToggle(this._pressed);
    });
  }

  get pressed(): boolean {
    return this._pressed;
  }

  set pressed(value: boolean) {
    this._pressed = value;
    this.node.setAttribute('aria-pressed', String(value));
  }
}

/** A toolbar button that acts, not toggles: no aria-pressed state. */
function actionButton(icon: LabIcon, tooltip: string, onClick: () => void): Widget {
  const widget = ReactWidget.create(
    React.createElement(ToolbarButtonComponent, {
      icon,
      tooltip,
      className: 'mg-lab-refresh',
      onClick
    })
  );
  widget.addClass('jp-ToolbarButton');
  return widget;
}

export class GenerationsPanel extends Widget {
  private _filters: Filters = { ...NO_FILTERS };
  private _rows: Row[] = [];
  private _list: HTMLUListElement;
  private _message: HTMLParagraphElement;
  private _count: HTMLParagraphElement;
  private _model: HTMLSelectElement;
  private _search: HTMLInputElement;
  private _empty: HTMLDivElement;
  private _toolbar: Toolbar;
  private _filterButtons: ToggleButton[] = [];
  private _built = new Map<string, { key: string; node: HTMLLIElement }>();

  constructor(
    private _feed: Feed,
    private _actions: RowActions
  ) {
    super();
    this.id = 'mediagen-generations';
    this.addClass('mg-lab-generations');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'mediagen generations');

    const title = document.createElement('h2');
    title.className = 'mg-lab-title';
    title.textContent = 'Generations';

    const toolbar = new Toolbar();
    toolbar.addClass('mg-lab-toolbar');
    toolbar.node.setAttribute('aria-label', 'Filters');
    for (const [name, label, tooltip] of FILTER_BUTTONS) {
      const button = new ToggleButton(label, tooltip, pressed => {
        this._filters[name] = pressed;
        this._render();
      });
      button.node.dataset.filter = name;
      this._filterButtons.push(button);
      toolbar.addItem(`filter-${name}`, button);
    }
    this._model = document.createElement('select');
    this._model.className = 'mg-lab-model';
    this._model.setAttribute('aria-label', 'Model');
    this._model.addEventListener('change', () => {
      this._filters.model = this._model.value;
      this._render();
    });
    toolbar.addItem('model', styledSelect(this._model));
    toolbar.addItem('spacer', Toolbar.createSpacerItem());
    toolbar.addItem(
      'refresh',
      actionButton(refreshIcon, 'Refresh: read the generations and credits now', () =>
        this._feed.refresh()
      )
    );

    this._search = document.createElement('input');
    this._search.type = 'search';
    this._search.className = 'mg-lab-search jp-mod-styled';
    this._search.placeholder = 'Search prompt, model, id';
    this._search.setAttribute('aria-label', 'Search generations');
    this._search.addEventListener('input', () => {
      this._filters.search = this._search.value;
      this._render();
    });

    this._message = document.createElement('p');
    this._message.className = 'mg-lab-message';
    this._message.setAttribute('role', 'status');
    this._empty = this._buildEmpty();
    this._count = document.createElement('p');
    this._count.className = 'mg-lab-count';
    this._list = document.createElement('ul');
    this._list.className = 'mg-lab-list';
    this._list.setAttribute('aria-label', 'Generations, newest first');
    this.node.append(title, this._search, this._message, this._count, this._empty, this._list);
    this._toolbar = toolbar;
    this._feed.changed.connect(this._onSnapshot, this);
    this._setModels();
  }

  private _ticker = 0;

  protected onAfterShow(): void {
    this._feed.want(this.id);
    this._startTicker();
  }

  /** Running rows' bars move every second between updates. */
  private _startTicker(): void {
    if (!this._ticker) {
      this._ticker = window.setInterval(() => this._tick(), 1000);
    }
  }

  private _stopTicker(): void {
    window.clearInterval(this._ticker);
    this._ticker = 0;
  }

  private _tick(): void {
    const now = new Date();
    for (const row of this._rows) {
      const bar = this._built.get(row.id)?.node.querySelector('progress');
      if (bar && bar.hasAttribute('value')) {
        bar.value = progressOf(row, now);
      }
    }
  }

  protected onAfterAttach(): void {
    // the toolbar's buttons are widgets: they render once attached through Lumino
    Widget.attach(this._toolbar, this.node, this._search);
    if (this.isVisible) {
      this._feed.want(this.id);
      this._startTicker();
    }
  }

  protected onBeforeHide(): void {
    this._feed.release(this.id);
    this._stopTicker();
  }

  protected onBeforeDetach(): void {
    Widget.detach(this._toolbar);
    this._feed.release(this.id);
    this._stopTicker();
  }

  dispose(): void {
    this._stopTicker();
    this._feed.release(this.id);
    this._feed.changed.disconnect(this._onSnapshot, this);
    this._toolbar.dispose();
    super.dispose();
  }

  private _onSnapshot(_: Feed, snap: Snapshot): void {
    if (!snap.configured) {
      this._message.textContent = snap.help || 'No mediagen API key is configured.';
      this._rows = [];
    } else {
      this._message.textContent = snap.error ? `Cannot reach the service: ${snap.error}` : '';
      if (!snap.generations) {
        return; // the credits only (the sidebar is hidden): the rows stay as they were
      }
      this._rows = snap.generations;
    }
    this._setModels();
    this._render();
  }

  private _setModels(): void {
    const chosen = this._filters.model;
    const models = modelsOf(this._rows);
    if (chosen && !models.includes(chosen)) {
      models.push(chosen);
    }
    const options = [['', 'All models'], ...models.map(m => [m, m])];
    const now = [...this._model.options].map(o => o.value).join('\n');
    if (now === options.map(([v]) => v).join('\n')) {
      return;
    }
    this._model.replaceChildren(
      ...options.map(([value, label]) => {
        const option = document.createElement('option');
        option.value = value;
        option.textContent = label;
        return option;
      })
    );
    this._model.value = chosen;
  }

  private _render(): void {
    const now = new Date();
    const shown = filterRows(this._rows, this._filters, now);
    const noMatch = shown.length === 0 && this._rows.length > 0;
    this._count.textContent = noMatch ? '' : `${shown.length} of ${this._rows.length}`;
    this._empty.hidden = !noMatch;
    const keep = new Set<string>();
    let previous: HTMLLIElement | null = null;
    for (const row of shown) {
      const key = JSON.stringify(row);
      let built = this._built.get(row.id);
      if (!built || built.key !== key) {
        const node = this._buildRow(row, now);
        if (built) {
          built.node.replaceWith(node);
        }
        built = { key, node };
        this._built.set(row.id, built);
      }
      keep.add(row.id);
      const wanted: ChildNode | null = previous ? previous.nextSibling : this._list.firstChild;
      if (wanted !== built.node) {
        this._list.insertBefore(built.node, wanted);
      }
      previous = built.node;
    }
    for (const [id, built] of [...this._built]) {
      if (!keep.has(id)) {
        built.node.remove();
        this._built.delete(id);
      }
    }
  }

  /** What a filter that lets nothing through says instead of a blank list. */
  private _buildEmpty(): HTMLDivElement {
    const empty = document.createElement('div');
    empty.className = 'mg-lab-empty';
    empty.hidden = true;
    const text = document.createElement('p');
    text.textContent = 'No generations match these filters.';
    const clear = document.createElement('button');
    clear.type = 'button';
    clear.className = 'mg-lab-clear jp-mod-styled jp-mod-accept';
    clear.textContent = 'Clear filters';
    clear.addEventListener('click', () => this.clearFilters());
    empty.append(text, clear);
    return empty;
  }

  clearFilters(): void {
    this._filters = { ...NO_FILTERS };
    for (const button of this._filterButtons) {
      button.pressed = false;
    }
    this._model.value = '';
    this._search.value = '';
    this._render();
    this._search.focus();
  }

  private _buildRow(row: Row, now: Date): HTMLLIElement {
    const item = document.createElement('li');
    item.className = 'mg-lab-row';
    item.dataset.generationId = row.id;
    item.dataset.status = row.status;

    const preview = document.createElement('div');
    preview.className = 'mg-lab-preview';
    const first = row.outputs[0];
    if (row.status === 'pending') {
      preview.appendChild(spinner());
    } else if (row.status === 'completed' && first) {
      const kind = mediaKind(first, row.type);
      const src = mediaUrl(row.id, first.index);
      if (kind === 'image') {
        const img = document.createElement('img');
        img.loading = 'lazy';
        img.src = src;
        img.alt = `Image from ${row.model}: ${row.prompt || ''}`.trim();
        preview.appendChild(img);
      } else if (kind === 'video') {
        preview.appendChild(videoPreview(src, row));
      } else if (kind === 'audio') {
        preview.appendChild(audioPreview(src, row));
      }
    }

    const body = document.createElement('div');
    body.className = 'mg-lab-body';
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'mg-lab-open';
    open.textContent = row.prompt || row.id;
    open.title = 'Open in a viewer tab';
    open.setAttribute('aria-label', `Open ${row.model} ${row.type || ''} ${row.prompt || ''}`);
    open.disabled = row.status !== 'completed';
    open.addEventListener('click', () => this._actions.open(row));

    const meta = document.createElement('div');
    meta.className = 'mg-lab-meta';
    const status = document.createElement('span');
    status.className = `mg-lab-status mg-lab-status-${row.status}`;
    status.textContent = row.status === 'pending' ? 'running' : row.status;
    const model = document.createElement('span');
    model.textContent = [row.model, row.mode && row.mode !== 'default' ? row.mode : null]
      .filter(Boolean)
      .join(' · ');
    const cost = document.createElement('span');
    cost.className = 'mg-lab-cost';
    cost.textContent = costLabel(row);
    meta.append(status, model, cost);
    body.append(open, meta);

    if (row.status === 'pending') {
      const bar = document.createElement('progress');
      bar.className = 'mg-lab-progress';
      if (row.forecast_seconds) {
        bar.max = 1;
        bar.value = progressOf(row, now);
        bar.setAttribute('aria-label', `Progress toward the forecast time of ${row.model}`);
      } else {
        // no finished job of this model to forecast from: say it runs, not how far along
        bar.setAttribute('aria-label', `${row.model} is running`);
      }
      body.appendChild(bar);
    }
    if (row.error) {
      const error = document.createElement('p');
      error.className = 'mg-lab-error';
      error.textContent = `${row.error.code}: ${row.error.message}`;
      body.appendChild(error);
    }

    const actions = document.createElement('div');
    actions.className = 'mg-lab-actions';
    const insert = document.createElement('button');
    insert.type = 'button';
    insert.className = 'mg-lab-insert';
    insert.textContent = 'Insert';
    insert.setAttribute('aria-label', `Insert a cell that binds generation ${row.id}`);
    insert.addEventListener('click', () => this._actions.insert(row));
    const copy = document.createElement('button');
    copy.type = 'button';
    copy.className = 'mg-lab-copy';
    copy.textContent = 'Copy id';
    copy.setAttribute('aria-label', `Copy id ${row.id}`);
    copy.addEventListener('click', () => {
      void this._actions.copyId(row).then(() => {
        copy.textContent = 'Copied';
        setTimeout(() => (copy.textContent = 'Copy id'), 1500);
      });
    });
    actions.append(insert, copy);
    body.appendChild(actions);

    item.append(preview, body);
    return item;
  }
}

/** A running job's preview: an indeterminate spinner where its media will be. */
function spinner(): HTMLDivElement {
  const box = document.createElement('div');
  box.className = 'mg-lab-placeholder';
  box.setAttribute('aria-hidden', 'true');
  const wheel = document.createElement('div');
  wheel.className = 'mg-lab-spinner';
  box.appendChild(wheel);
  return box;
}

/** A small video that shows a frame (its metadata and the frame at 0.1 s), not a black box. */
function videoPreview(src: string, row: Row): HTMLVideoElement {
  const video = document.createElement('video');
  video.controls = true;
  video.preload = 'metadata';
  video.muted = true;
  video.src = `${src}#t=0.1`;
  video.setAttribute('aria-label', `video from ${row.model}`);
  return video;
}

/** A play/pause button the size of a thumbnail: a native audio player squeezed to 64 px
 * keeps none of its controls usable. */
function audioPreview(src: string, row: Row): HTMLDivElement {
  const box = document.createElement('div');
  box.className = 'mg-lab-audio';
  const audio = document.createElement('audio');
  audio.preload = 'none';
  audio.src = src;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'mg-lab-play';
  const show = (playing: boolean): void => {
    const verb = playing ? 'Pause' : 'Play';
    button.setAttribute('aria-label', `${verb} the audio from ${row.model}`);
    button.title = verb;
    button.replaceChildren((playing ? pauseIcon : runIcon).element({ tag: 'span' }));
  };
  show(false);
  audio.addEventListener('play', () => show(true));
  audio.addEventListener('pause', () => show(false));
  audio.addEventListener('ended', () => show(false));
  button.addEventListener('click', () => {
    if (audio.paused) {
      audio.play().catch(() => show(false)); // refused (no user gesture, no media): stays Play
    } else {
      audio.pause();
    }
  });
  box.append(button, audio);
  return box;
}
