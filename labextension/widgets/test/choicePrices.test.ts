import { announceEdit, ChoicePrices, instantPrice, onFormEdit } from '../src/choicePrices';

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
    announceEdit({ token: 'a', changes: { duration_seconds: 10 } }, page);
    stop();
    announceEdit({ token: 'a', changes: { duration_seconds: 5 } }, page);
    stopOthers();
    expect(mine).toEqual([{ duration_seconds: 10 }]);
    expect(others).toEqual([]);
  });
});
