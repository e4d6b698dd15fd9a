/**
 * The page's end of the server's one poller: a long-poll loop that runs while something on the
 * page wants it and stops otherwise, telling the server it left so its poller can stop too.
 * What it asks for is the widest scope wanted: the status item wants the credits only (it
 * wants them as long as JupyterLab is open), the shown sidebar wants every generation too.
 */
import { Signal, ISignal } from '@lumino/signaling';

import { requestAPI } from './api';
import { Snapshot } from './model';

/** Every generation and the credits, or the credits only (the server's `scope`). */
export type Scope = 'all' | 'credits';

export class Feed {
  readonly subscriber = `tab-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  private _version = -1;
  private _wanted = new Map<string, Scope>();
  private _scope: Scope = 'credits';
  private _abort: AbortController | null = null;
  private _snapshot: Snapshot | null = null;
  private _refreshAsked = false;
  private _changed = new Signal<this, Snapshot>(this);

  get changed(): ISignal<this, Snapshot> {
    return this._changed;
  }

  get snapshot(): Snapshot | null {
    return this._snapshot;
  }

  /** `who` wants live data of `scope`; the loop runs while anyone does. */
  want(who: string, scope: Scope = 'all'): void {
    this._wanted.set(who, scope);
    this._follow();
  }

  /** Ask the server to read everything now, and answer with what it has at once. */
  refresh(): void {
    if (this._wanted.size === 0) {
      return;
    }
    this._refreshAsked = true;
    this._restart(this._scope);
  }

  release(who: string): void {
    this._wanted.delete(who);
    this._follow();
  }

  /** Start, stop or re-scope the loop to what is wanted now. */
  private _follow(): void {
    if (this._wanted.size === 0) {
      if (this._abort) {
        this._abort.abort();
        this._abort = null;
        requestAPI(`events?subscriber=${this.subscriber}`, { method: 'DELETE' }).catch(() => {
          /* the server forgets a silent subscriber after its lease anyway */
        });
      }
      return;
    }
    const scope: Scope = [...this._wanted.values()].includes('all') ? 'all' : 'credits';
    if (this._abort && scope === this._scope) {
      return;
    }
    // A new scope is asked at once (the held request is dropped) and answered at once: the
    // sidebar shown again gets the rows now, and the server stops listing them when it hides.
    this._restart(scope);
  }

  private _restart(scope: Scope): void {
    this._abort?.abort();
    this._scope = scope;
    this._version = -1;
    this._abort = new AbortController();
    void this._loop(this._abort.signal, scope);
  }

  private async _loop(signal: AbortSignal, scope: Scope): Promise<void> {
    while (!signal.aborted) {
      try {
        const refresh = this._refreshAsked ? '&refresh=1' : '';
        this._refreshAsked = false;
        const snap = await requestAPI<Snapshot>(
          `events?subscriber=${this.subscriber}&since=${this._version}&scope=${scope}${refresh}`,
          { signal }
        );
        if (signal.aborted) {
          return;
        }
        this._version = snap.version;
        this._snapshot = snap;
        this._changed.emit(snap);
        if (!snap.configured) {
          await sleep(10000, signal);
        }
      } catch {
        // the server restarting, the network, an abort: wait and ask again
        await sleep(2000, signal);
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
