// Helpers shared by every mediagen view (bundled into each view's module by widgets/build.mjs).
import { describeItem, type MediaItem } from './format';
import type { AnyModel, Experimental, Handler, Invoke, RenderProps, ViewModule } from './model';

// The stylesheet every mediagen view shares (mediagen.css) and its hash, put in at build time
// by widgets/build.mjs. The page holds it once, however many widgets it shows: as anywidget's
// `_css` it would be a copy per widget class, each restyling the whole page when a widget
// appears.
const SHARED_CSS = MEDIAGEN_SHARED_CSS;
const SHARED_CSS_HASH = MEDIAGEN_SHARED_CSS_HASH;
const SHARED_STYLE_ID = 'mediagen-shared-css';

/** Put the shared stylesheet in the page once (again only if this mediagen's differs). */
export function ensureSharedStyles(): void {
  let style = document.getElementById(SHARED_STYLE_ID);
  if (style && style.dataset.hash === SHARED_CSS_HASH) return;
  if (!style) {
    style = document.createElement('style');
    style.id = SHARED_STYLE_ID;
    document.head.append(style);
  }
  style.dataset.hash = SHARED_CSS_HASH;
  style.textContent = SHARED_CSS;
}

ensureSharedStyles();

/** The shared stylesheet inside the shadow root a view is drawn in, when it is: marimo renders
 * each anywidget in one, where the page's <head> does not reach. The page builds one sheet
 * (kept on the window, as every view module carries its own copy of this file) and each root
 * adopts it once. */
export function adoptSharedStyles(el: HTMLElement): boolean {
  const root = el.getRootNode ? el.getRootNode() : null;
  if (typeof ShadowRoot === 'undefined' || !(root instanceof ShadowRoot)) return false;
  const scope = globalThis as typeof globalThis & {
    __mediagenSheets?: Record<string, CSSStyleSheet>;
  };
  const sheets = (scope.__mediagenSheets ||= {});
  let sheet = sheets[SHARED_CSS_HASH];
  if (!sheet) {
    sheet = sheets[SHARED_CSS_HASH] = new CSSStyleSheet();
    sheet.replaceSync(SHARED_CSS);
  }
  if (!root.adoptedStyleSheets.includes(sheet))
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
  return true;
}

// Requests waiting for the kernel's answer, by model: id -> {resolve, reject}.
interface Waiting {
  resolve: (answer: [unknown, DataView[]]) => void;
  reject: (reason: unknown) => void;
}
const pendingCommands = new WeakMap<AnyModel, Map<string, Waiting>>();

/** anywidget's command call (``experimental.invoke``) spoken over the model's own custom
 * messages, in the wire format of anywidget's Python ``@command`` handler: the same on every
 * host, marimo included, where ``experimental.invoke`` is missing. Resolves [response, buffers]. */
export function invoker(model: AnyModel): Invoke {
  return (name, msg, { signal, buffers = [] } = {}) => {
    let pending = pendingCommands.get(model);
    if (!pending) {
      const waitingFor = new Map<string, Waiting>();
      pending = waitingFor;
      pendingCommands.set(model, waitingFor);
      model.on('msg:custom', (content, answered) => {
        if (!content || content.kind !== 'anywidget-command-response') return;
        const waiting = waitingFor.get(content.id);
        if (!waiting) return;
        waitingFor.delete(content.id);
        waiting.resolve([content.response, answered || []]);
      });
    }
    const id = (crypto.randomUUID && crypto.randomUUID()) || `${Date.now()}-${Math.random()}`;
    const waiting = pending;
    return new Promise((resolve, reject) => {
      if (signal && signal.aborted) {
        reject(signal.reason);
        return;
      }
      waiting.set(id, { resolve, reject });
      if (signal)
        signal.addEventListener(
          'abort',
          () => {
            waiting.delete(id);
            reject(signal.reason);
          },
          { once: true }
        );
      model.send({ id, kind: 'anywidget-command', name, msg }, undefined, buffers);
    });
  };
}

/** A view module whose render first makes sure the shared styles reach its element (also
 * once the element is placed, for a host that renders before attaching it), and whose
 * ``experimental.invoke`` is :func:`invoker`'s. */
export function styled(module: ViewModule): ViewModule {
  return {
    ...module,
    render(props: RenderProps) {
      if (!adoptSharedStyles(props.el)) queueMicrotask(() => adoptSharedStyles(props.el));
      const experimental = { ...(props.experimental || {}), invoke: invoker(props.model) };
      return module.render({ ...props, experimental });
    }
  };
}

/** One child for h(): a node, text or a number; null, undefined and false are skipped. */
export type Leaf = Node | string | number | null | undefined | false;

/** What h() takes as children: leaves, or lists of them (one level, spread in place). */
export type Child = Leaf | Leaf[];

/** Attributes for h(): `on*` functions become listeners, `dataset` fills data-*, `true` is a
 * bare attribute and null, undefined or false leave the attribute out. */
export type Attrs = Record<string, unknown>;

/** Create an element: h("div", {class: "mg-row", "aria-label": "x"}, child, "text"). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      node.addEventListener(name.slice(2).toLowerCase(), value as EventListener);
    } else if (name === 'dataset') {
      Object.assign(node.dataset, value as Record<string, unknown>);
    } else if (value === true) {
      node.setAttribute(name, '');
    } else {
      node.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/**
 * Make `parent`'s children exactly `nodes`, in order, moving only those out of place. A node
 * that stays is never detached, so the element a user is pressing, hovering or focusing
 * survives a re-render.
 */
export function placeChildren(parent: Element, nodes: Node[]): void {
  // those leaving go first: a node made anew in an old one's place must not push the kept
  // ones after it out and back in
  const wanted = new Set(nodes);
  for (const child of Array.from(parent.childNodes)) {
    if (!wanted.has(child)) child.remove();
  }
  nodes.forEach((node, i) => {
    const here = parent.childNodes[i] ?? null;
    if (here !== node) parent.insertBefore(node, here);
  });
}

/**
 * A renderer of lists that keeps each item's node while the item is unchanged: call the result
 * with the items and it returns their nodes, made by `make` only for an item that is new or
 * whose JSON differs from the last call's. Pair it with placeChildren.
 */
export function keptNodes<T, N extends Node>(
  make: (item: T) => N,
  key: (item: T) => string
): (items: T[]) => N[] {
  let kept = new Map<string, { json: string; node: N }>();
  return items => {
    const next = new Map<string, { json: string; node: N }>();
    const nodes = items.map(item => {
      const json = JSON.stringify(item);
      const old = kept.get(key(item));
      const entry = old && old.json === json ? old : { json, node: make(item) };
      next.set(key(item), entry);
      return entry.node;
    });
    kept = next;
    return nodes;
  };
}

const MEDIA_TIMEOUT_MS = 120000;

/**
 * Ask the kernel for the bytes of media `key` (anywidget command "media") and return a Blob
 * URL. The caller owns the URL and must revoke it (URL.revokeObjectURL) when done.
 */
export async function fetchMediaUrl(
  experimental: Experimental,
  key: string,
  signal?: AbortSignal
): Promise<string> {
  const timeout = AbortSignal.timeout(MEDIA_TIMEOUT_MS);
  const combined = signal && AbortSignal.any ? AbortSignal.any([signal, timeout]) : timeout;
  const [meta, buffers] = await experimental.invoke('media', { key }, { signal: combined });
  if (meta && meta.error) throw new Error(meta.error);
  return URL.createObjectURL(new Blob(buffers as BlobPart[], { type: meta.content_type }));
}

/** A player element for `item` ({kind, label, content_type}) whose src is set later. */
export function mediaElement(item: MediaItem): HTMLElement {
  const label = item.label || item.kind;
  if (item.kind === 'image') {
    return h('img', { class: 'mg-media mg-media--image', alt: label, decoding: 'async' });
  }
  if (item.kind === 'video') {
    return h('video', {
      class: 'mg-media mg-media--video',
      controls: true,
      preload: 'metadata',
      playsinline: true,
      'aria-label': `Video: ${label}`
    });
  }
  if (item.kind === 'audio') {
    return h('audio', {
      class: 'mg-media mg-media--audio',
      controls: true,
      preload: 'metadata',
      'aria-label': `Audio: ${label}`
    });
  }
  return h('span', { class: 'mg-muted' }, label);
}

/**
 * Load `item` into a figure: placeholder first, then the element with a Blob URL.
 * Returns {node, dispose}: dispose aborts a pending request and revokes the URL.
 * `onReady(element, url)` runs once the element has its source.
 */
/** A media figure: its node, and the disposer that aborts its load and revokes its URL. */
export interface Figure {
  node: HTMLElement;
  dispose(): void;
}

export interface FigureOptions {
  caption?: boolean;
  onReady?: ((element: HTMLElement, url: string) => void) | null;
}

export function mediaFigure(
  experimental: Experimental,
  item: MediaItem,
  { caption = true, onReady = null }: FigureOptions = {}
): Figure {
  const controller = new AbortController();
  let url: string | null = null;
  let element: (HTMLElement & { src?: string; load?: () => void }) | null = null;
  const placeholder = h('div', { class: 'mg-placeholder', role: 'status' }, 'Loading…');
  if (item.width && item.height) placeholder.style.aspectRatio = `${item.width} / ${item.height}`;
  const node = h(
    'figure',
    { class: 'mg-media-frame', style: 'margin:0', dataset: { kind: item.kind, key: item.key } },
    placeholder,
    caption ? h('figcaption', { class: 'mg-media-caption' }, describeItem(item)) : null
  );
  fetchMediaUrl(experimental, item.key, controller.signal).then(
    objectUrl => {
      if (controller.signal.aborted) {
        URL.revokeObjectURL(objectUrl);
        return;
      }
      url = objectUrl;
      const shown: HTMLElement & { src?: string } = mediaElement(item);
      element = shown;
      shown.src = objectUrl;
      placeholder.replaceWith(shown);
      if (onReady) onReady(shown, objectUrl);
    },
    err => {
      if (controller.signal.aborted) return;
      placeholder.textContent = `Could not load media: ${err && err.message ? err.message : err}`;
      placeholder.classList.add('mg-error');
    }
  );
  return {
    node,
    dispose() {
      controller.abort();
      if (element) {
        // stop a load still running, so it never asks for the revoked URL
        element.removeAttribute('src');
        if (element.load) element.load();
      }
      if (url) URL.revokeObjectURL(url);
      url = null;
    }
  };
}

/** Whether the page around a view is dark. JupyterLab and Notebook 7 mark the theme on
 * <body data-jp-theme-light>; VS Code marks body.vscode-dark; marimo marks <html class="dark">;
 * anywhere else the browser's colour-scheme preference decides. */
export function isDark(): boolean {
  const body = document.body;
  if (body.dataset.jpThemeLight !== undefined) return body.dataset.jpThemeLight === 'false';
  if (body.classList.contains('vscode-dark') || body.classList.contains('vscode-high-contrast'))
    return true;
  if (body.classList.contains('vscode-light')) return false;
  // marimo: a "dark" or "dark-theme" class on <html> or <body>
  const marked = (name: string) =>
    document.documentElement.classList.contains(name) || body.classList.contains(name);
  if (marked('dark') || marked('dark-theme')) return true;
  if (marked('light') || marked('light-theme')) return false;
  return Boolean(window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches);
}

/** Keep the model's ``dark`` trait telling the kernel whether the page is dark (for plots drawn
 * there). Returns the undo. */
export function watchTheme(model: AnyModel): () => void {
  const report = () => {
    const dark = isDark();
    if (model.get('dark') !== dark) {
      model.set('dark', dark);
      model.save_changes();
    }
  };
  report();
  const observer = new MutationObserver(report);
  const watched = { attributes: true, attributeFilter: ['data-jp-theme-light', 'class'] };
  observer.observe(document.body, watched);
  observer.observe(document.documentElement, watched);
  return () => observer.disconnect();
}

/** Tell the kernel, through the page-owned trait `page_seen`, each time a new value of one of
 * `traits` reaches the page. marimo re-runs the cells that read a widget only when a page
 * changes it, so a value the kernel set (a winner the kernel recorded for a click) reaches
 * those cells this way; Jupyter takes it as one more small update. Returns the undo. */
export function echo(model: AnyModel, traits: string[]): () => void {
  const seen = () => {
    model.set('page_seen', `${Date.now()}-${Math.random().toString(36).slice(2)}`);
    model.save_changes();
  };
  return listen(model, { [traits.map(name => `change:${name}`).join(' ')]: seen });
}

// Draw a view now and on each change of ``traits``; ask the kernel to refresh once (a reloaded
// page shows today's figures, not the ones saved with the notebook). Returns the cleanup
// anywidget calls when the view goes.
export function follow(model: AnyModel, traits: string[], update: () => void): () => void {
  update();
  model.send({ action: 'refresh' });
  return listen(model, { [traits.map(name => `change:${name}`).join(' ')]: update });
}

// Subscribe each handler of ``handlers`` (``{"change:a change:b": fn}``) to the model, one
// event at a time as anywidget's model API takes them (Jupyter's Backbone model would split the
// string, marimo's does not); returns the function that undoes every subscription, for
// anywidget to call when the view goes.
export function listen(model: AnyModel, handlers: Record<string, Handler>): () => void {
  const pairs = Object.entries(handlers).flatMap(([events, handler]) =>
    events
      .split(/\s+/)
      .filter(Boolean)
      .map((event): [string, Handler] => [event, handler])
  );
  for (const [event, handler] of pairs) model.on(event, handler);
  return () => {
    for (const [event, handler] of pairs) model.off(event, handler);
  };
}

/** Keep a view's error banner in sync with the model's `error` trait. */
export function errorBanner(model: AnyModel): { node: HTMLElement; dispose: () => void } {
  const node = h('div', { class: 'mg-error', role: 'alert' });
  const update = () => {
    node.textContent = model.get('error') || '';
  };
  update();
  model.on('change:error', update);
  return { node, dispose: () => model.off('change:error', update) };
}

/**
 * Media figures fetched only when their slot scrolls into view, and kept across re-renders while
 * their item is still shown (fetched once, never revoked mid-load). A slot carries its item as
 * JSON in `data-item`; `place(slot, figure)` puts a figure into it; `options(item)` are the
 * mediaFigure options.
 */
export interface LazyFigures {
  reset(shownKeys: Set<string>): void;
  show(slot: HTMLElement, item: MediaItem): void;
  dispose(): void;
}

export function lazyFigures(
  experimental: Experimental,
  {
    place,
    options = () => ({})
  }: {
    place: (slot: HTMLElement, figure: Figure) => void;
    options?: (item: MediaItem) => FigureOptions;
  }
): LazyFigures {
  const loaded = new Map<string, Figure>();
  const figureFor = (item: MediaItem): Figure => {
    let figure = loaded.get(item.key);
    if (!figure) {
      figure = mediaFigure(experimental, item, options(item));
      loaded.set(item.key, figure);
    }
    return figure;
  };
  const observer = new IntersectionObserver(
    records => {
      for (const record of records) {
        if (!record.isIntersecting) continue;
        observer.unobserve(record.target);
        const slot = record.target as HTMLElement;
        place(slot, figureFor(JSON.parse(slot.dataset.item ?? '{}')));
      }
    },
    { rootMargin: '200px' }
  );
  return {
    /** Before a re-render: stop watching old slots, drop the figures of items no longer shown. */
    reset(shownKeys) {
      observer.disconnect();
      for (const [key, figure] of loaded) {
        if (!shownKeys.has(key)) {
          figure.dispose();
          loaded.delete(key);
        }
      }
    },
    /** Fill `slot` now if its item is loaded, else once it scrolls into view. */
    show(slot, item) {
      const figure = loaded.get(item.key);
      if (figure) place(slot, figure);
      else observer.observe(slot);
    },
    dispose() {
      observer.disconnect();
      for (const figure of loaded.values()) figure.dispose();
      loaded.clear();
    }
  };
}
