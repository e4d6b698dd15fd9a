/**
 * The Generations sidebar: every generation of this key, newest first, live. Rows are updated
 * in place (a row is rebuilt only when its data changed), so a playing video or a focused
 * button survives the next update.
 */
import { Widget } from '@lumino/widgets';

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

export class GenerationsPanel extends Widget {
  private _filters: Filters = { ...NO_FILTERS };
  private _rows: Row[] = [];
  private _list: HTMLUListElement;
  private _message: HTMLParagraphElement;
  private _count: HTMLParagraphElement;
  private _model: HTMLSelectElement;
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

    const tools = document.createElement('div');
    tools.className = 'mg-lab-filters';
    tools.setAttribute('role', 'group');
    tools.setAttribute('aria-label', 'Filters');
    for (const [name, label] of [
      ['running', 'Running'],
      ['failed', 'Failed'],
      ['today', 'Today']
    ] as const) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'mg-lab-filter';
      button.textContent = label;
      button.dataset.filter = name;
      button.setAttribute('aria-pressed', 'false');
      button.addEventListener('click', () => {
        this._filters[name] = !this._filters[name];
        button.setAttribute('aria-pressed', String(this._filters[name]));
        this._render();
      });
      tools.appendChild(button);
    }
    this._model = document.createElement('select');
    this._model.className = 'mg-lab-model';
    this._model.setAttribute('aria-label', 'Model');
    this._model.addEventListener('change', () => {
      this._filters.model = this._model.value;
      this._render();
    });
    tools.appendChild(this._model);
    const search = document.createElement('input');
    search.type = 'search';
    search.className = 'mg-lab-search';
    search.placeholder = 'Search prompt, model, id';
    search.setAttribute('aria-label', 'Search generations');
    search.addEventListener('input', () => {
      this._filters.search = search.value;
      this._render();
    });
    tools.appendChild(search);

    this._message = document.createElement('p');
    this._message.className = 'mg-lab-message';
    this._message.setAttribute('role', 'status');
    this._count = document.createElement('p');
    this._count.className = 'mg-lab-count';
    this._list = document.createElement('ul');
    this._list.className = 'mg-lab-list';
    this._list.setAttribute('aria-label', 'Generations, newest first');
    this.node.append(title, tools, this._message, this._count, this._list);
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
      if (bar) {
        bar.value = progressOf(row, now);
      }
    }
  }

  protected onAfterAttach(): void {
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
    this._feed.release(this.id);
    this._stopTicker();
  }

  dispose(): void {
    this._stopTicker();
    this._feed.release(this.id);
    this._feed.changed.disconnect(this._onSnapshot, this);
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
    this._count.textContent = `${shown.length} of ${this._rows.length}`;
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

  private _buildRow(row: Row, now: Date): HTMLLIElement {
    const item = document.createElement('li');
    item.className = 'mg-lab-row';
    item.dataset.generationId = row.id;
    item.dataset.status = row.status;

    const preview = document.createElement('div');
    preview.className = 'mg-lab-preview';
    const first = row.outputs[0];
    if (row.status === 'completed' && first) {
      const kind = mediaKind(first, row.type);
      if (kind === 'image') {
        const img = document.createElement('img');
        img.loading = 'lazy';
        img.src = mediaUrl(row.id, first.index);
        img.alt = `Image from ${row.model}: ${row.prompt || ''}`.trim();
        preview.appendChild(img);
      } else if (kind === 'video' || kind === 'audio') {
        const player = document.createElement(kind);
        player.controls = true;
        player.preload = 'none';
        player.src = mediaUrl(row.id, first.index);
        player.setAttribute('aria-label', `${kind} from ${row.model}`);
        preview.appendChild(player);
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
      bar.max = 1;
      bar.value = progressOf(row, now);
      bar.setAttribute('aria-label', `Progress toward the forecast time of ${row.model}`);
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
