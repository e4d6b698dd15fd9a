/**
 * The page's end of the server's one poller: a long-poll loop that runs while something on the
 * page wants it (the sidebar is shown, the spend panel is open) and stops otherwise, telling
 * the server it left so its poller can stop too.
 */
import { Signal, ISignal } from '@lumino/signaling';

import { requestAPI } from './api';
import { Snapshot } from './model';

export class Feed {
  readonly subscriber = `tab-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  private _version = -1;
  private _wanted = new Set<string>();
  private _abort: AbortController | null = null;
  private _snapshot: Snapshot | null = null;
  private _changed = new Signal<this, Snapshot>(this);

  get changed(): ISignal<this, Snapshot> {
    return this._changed;
  }

  get snapshot(): Snapshot | null {
    return this._snapshot;
  }

  /** `who` wants live data; the loop runs while anyone does. */
  want(who: string): void {
    this._wanted.add(who);
    if (!this._abort) {
      this._abort = new AbortController();
      void this._loop(this._abort.signal);
    }
  }

  release(who: string): void {
    this._wanted.delete(who);
    if (this._wanted.size === 0 && this._abort) {
      this._abort.abort();
      this._abort = null;
      requestAPI(`events?subscriber=${this.subscriber}`, { method: 'DELETE' }).catch(() => {
        /* the server forgets a silent subscriber after its lease anyway */
      });
    }
  }

  private async _loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const snap = await requestAPI<Snapshot>(
          `events?subscriber=${this.subscriber}&since=${this._version}`,
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
