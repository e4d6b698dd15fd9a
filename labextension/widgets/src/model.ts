// What a view gets from anywidget, the same on every host (JupyterLab, Notebook 7, VS Code,
// marimo). The traits are whatever JSON the kernel sends, so `get` is loosely typed: each view
// reads the shapes its Python class declares.

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Handler = (...args: any[]) => void;

/** anywidget's model: traits, custom messages and change events. */
export interface AnyModel {
  get(name: string): any;
  set(name: string, value: unknown): void;
  save_changes(): void;
  send(content: unknown, callbacks?: unknown, buffers?: ArrayBuffer[]): void;
  on(event: string, handler: Handler): void;
  off(event: string, handler: Handler): void;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Options of a command call: an abort signal and binary buffers to send along. */
export interface InvokeOptions {
  signal?: AbortSignal;
  buffers?: ArrayBuffer[];
}

/** anywidget's command call: resolves [response, buffers]. */
export type Invoke = (
  name: string,
  msg: unknown,
  options?: InvokeOptions
) => Promise<[any, DataView[] | ArrayBuffer[]]>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Experimental {
  invoke: Invoke;
}

/** What anywidget passes a view's render. */
export interface RenderProps {
  model: AnyModel;
  el: HTMLElement;
  experimental: Experimental;
  // anywidget's host (widgets drawn inside another) and the view's lifetime, where given
  host?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  signal?: AbortSignal;
}

/** What render returns: nothing, or the cleanup anywidget calls when the view goes. */
export type Cleanup = void | (() => void);

export interface ViewModule {
  render(props: RenderProps): Cleanup | Promise<Cleanup>;
}
