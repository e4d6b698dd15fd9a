import {
  announceEdit,
  ChoicePrices,
  InstantPrice,
  instantPrice,
  newEditId,
  onFormEdit
} from '../src/choicePrices';

const prices: ChoicePrices = {
  seq: 3,
  fields: {
    duration_seconds: [
      [5, { credits: 30, billable_duration_seconds: 5 }],
      [10, { credits: 60, billable_duration_seconds: 10 }]
    ],
    generate_audio: [
      [true, { credits: 30 }],
      [false, { credits: 20 }]
    ],
    size: [[{ width: 512, height: 512 }, { credits: 2 }]]
  },
  current: { duration_seconds: 5, generate_audio: true, size: null }
};

describe('instantPrice', () => {
  it('prices one priced choice', () => {
    expect(instantPrice(prices, { duration_seconds: 10 })).toEqual({
      credits: 60,
      billable_duration_seconds: 10
    });
    expect(instantPrice(prices, { generate_audio: false })).toEqual({ credits: 20 });
    expect(instantPrice(prices, { size: { width: 512, height: 512 } })).toEqual({ credits: 2 });
  });

  it('leaves to the kernel a choice it did not price, another field, or several at once', () => {
    expect(instantPrice(prices, { duration_seconds: 15 })).toBeNull();
    expect(instantPrice(prices, { prompt: 'a fox' })).toBeNull();
    expect(instantPrice(prices, { duration_seconds: 10, generate_audio: true })).toBeNull();
    expect(instantPrice({}, { duration_seconds: 10 })).toBeNull();
  });

  it('leaves alone a choice the kernel has made already (it would price nothing new)', () => {
    expect(instantPrice(prices, { duration_seconds: 5 })).toBeNull();
    expect(instantPrice(prices, { generate_audio: true })).toBeNull();
  });
});

describe('form edits on the page', () => {
  it('reach the listeners of the same form only, until they unsubscribe', () => {
    const page = new EventTarget();
    const mine: unknown[] = [];
    const others: unknown[] = [];
    const stop = onFormEdit(
      () => 'a',
      edit => mine.push(edit.changes),
      page
    );
    const stopOthers = onFormEdit(
      () => 'b',
      edit => others.push(edit.changes),
      page
    );
    announceEdit({ token: 'a', id: '1', changes: { duration_seconds: 10 } }, page);
    stop();
    announceEdit({ token: 'a', id: '2', changes: { duration_seconds: 5 } }, page);
    stopOthers();
    expect(mine).toEqual([{ duration_seconds: 10 }]);
    expect(others).toEqual([]);
  });
});

describe('the price shown between an edit and the kernel', () => {
  const edit = (id: string, changes: Record<string, unknown>) =>
    ({ token: 'a', id, changes }) as Parameters<InstantPrice['edit']>[0];
  const answered = (id: string | null): ChoicePrices => ({ ...prices, edit: id });

  it("shows a picked choice's price until the kernel's prices for that edit arrive", () => {
    const instant = new InstantPrice();
    expect(instant.edit(edit('e1', { duration_seconds: 10 }), answered(null))).toBe(true);
    expect(instant.shown).toEqual({ credits: 60, billable_duration_seconds: 10 });
    // prices of the request before the edit (a view that reappeared asked for them)
    expect(instant.kernel(answered(null))).toBe(false);
    expect(instant.shown).toEqual({ credits: 60, billable_duration_seconds: 10 });
    expect(instant.kernel(answered('e1'))).toBe(true);
    expect(instant.shown).toBeNull();
  });

  it('goes unpriced for a second edit before the kernel answered the first', () => {
    const instant = new InstantPrice();
    instant.edit(edit('e1', { prompt: 'a fox' }), answered(null)); // nothing to show at once
    expect(instant.shown).toBeNull();
    expect(instant.edit(edit('e2', { duration_seconds: 10 }), answered(null))).toBe(true);
    expect(instant.shown).toBe('unpriced');
    expect(instant.kernel(answered('e1'))).toBe(false); // the first edit only
    expect(instant.shown).toBe('unpriced');
    expect(instant.kernel(answered('e2'))).toBe(true);
    expect(instant.shown).toBeNull();
    // caught up: the next pick is priced at once again
    instant.edit(edit('e3', { generate_audio: false }), answered('e2'));
    expect(instant.shown).toEqual({ credits: 20 });
  });

  it('names each edit apart', () => {
    expect(new Set([newEditId(), newEditId(), newEditId()]).size).toBe(3);
  });
});
