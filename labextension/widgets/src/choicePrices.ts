// The price a choice will cost, shown the moment it is made. With each request it prices, the
// kernel also prices every choice of the fields that change the price (the same catalog
// tables, one field changed at a time); the form view announces each edit it sends, and the
// estimate view shows that choice's price at once, without waiting for the kernel's answer
// (a kernel busy with another cell answers late, and even an idle one is a websocket round
// trip away). The kernel's own answer replaces it.
import type { Json } from './formRules';

/** A price as the kernel's provisional estimate states it (``LiveEstimate.provisional``). */
export interface Shown {
  credits?: number | null;
  credits_after_discount?: number | null;
  billable_duration_seconds?: number | null;
  unknown?: string | null;
}

/** ``LiveEstimate.choice_prices``: ``seq`` changes with every request the kernel prices;
 * ``current`` holds each priced field's value in that request, and ``edit`` the id of the
 * last edit of the form's view the kernel had applied when it priced it. */
export interface ChoicePrices {
  seq?: number;
  fields?: Record<string, [Json, Shown][]>;
  current?: Record<string, Json>;
  edit?: string | null;
}

/** What the form view announces on the page for each edit it sends to its kernel, under the
 * same ``id`` it sends the kernel. */
export interface FormEdit {
  token: string;
  id: string;
  changes: Record<string, Json | undefined>;
}

let edits = 0;
/** An id for an edit, unique on the page and across its reloads. */
export function newEditId(): string {
  edits += 1;
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${edits}`;
}

export const FORM_EDIT_EVENT = 'mediagen-form-edit';

/** The price of an edit, when it is one priced choice the kernel has not made already; else
 * null (the kernel will say, or has said). */
export function instantPrice(prices: ChoicePrices, changes: FormEdit['changes']): Shown | null {
  const names = Object.keys(changes);
  if (names.length !== 1) return null;
  const options = prices.fields?.[names[0]];
  if (!options) return null;
  const wanted = JSON.stringify(changes[names[0]] ?? null);
  if (JSON.stringify(prices.current?.[names[0]] ?? null) === wanted) return null;
  const found = options.find(([value]) => JSON.stringify(value) === wanted);
  return found ? found[1] : null;
}

/** Announce an edit to the estimate views of the same form. The page's window carries it: a
 * widget's root may be a shadow DOM (marimo), which an event bubbling up would not leave. */
export function announceEdit(edit: FormEdit, target: EventTarget = window): void {
  target.dispatchEvent(new CustomEvent<FormEdit>(FORM_EDIT_EVENT, { detail: edit }));
}

/** Call ``handler`` with each edit of the form ``token()`` names; returns the unsubscribe. */
export function onFormEdit(
  token: () => string,
  handler: (edit: FormEdit) => void,
  target: EventTarget = window
): () => void {
  const listener = (event: Event) => {
    const edit = (event as CustomEvent<FormEdit>).detail;
    if (edit && token() && edit.token === token()) handler(edit);
  };
  target.addEventListener(FORM_EDIT_EVENT, listener);
  return () => target.removeEventListener(FORM_EDIT_EVENT, listener);
}

/** What an estimate view shows between an edit and the kernel's answer to it: the picked
 * choice's price, or ``'unpriced'`` when a second edit came before the kernel answered the
 * first (its price would come from values the kernel has not seen), or null: the kernel's own
 * state. Only the kernel's prices for that very edit end it: prices the kernel sends for an
 * older request (a view that reappeared asks for one) leave it on screen. */
export class InstantPrice {
  shown: Shown | 'unpriced' | null = null;
  private waitingFor: string | null = null;

  /** An edit the form view announced; true when what to show changed. */
  edit(edit: FormEdit, prices: ChoicePrices): boolean {
    const before = this.shown;
    if (this.waitingFor !== null) {
      this.shown = 'unpriced';
    } else {
      this.shown = instantPrice(prices, edit.changes);
    }
    this.waitingFor = edit.id;
    return this.shown !== before;
  }

  /** The kernel's prices arrived; true when what to show changed. */
  kernel(prices: ChoicePrices): boolean {
    if (this.waitingFor === null || prices.edit !== this.waitingFor) return false;
    this.waitingFor = null;
    const before = this.shown;
    this.shown = null;
    return before !== null;
  }
}
