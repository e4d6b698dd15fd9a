import {
  credentialsLine,
  describeItem,
  elapsedSeconds,
  formatCredits,
  formatDuration,
  formatNumber,
  plural,
  statusTone,
  timing
} from '../src/format';

// formatNumber follows the browser's locale; these figures read the same in any locale that
// writes a decimal point and groups thousands with a comma (Node's default, en-US).
const point = (text: string) => text.replace(',', '.');

describe('formatNumber', () => {
  it('states a number as it is, up to two decimals', () => {
    expect(formatNumber(2)).toBe('2');
    expect(point(formatNumber(0.5))).toBe('0.5');
    expect(point(formatNumber(1.25))).toBe('1.25');
    expect(point(formatNumber(1.234))).toBe('1.23');
  });

  it('shows a dash for no figure', () => {
    expect(formatNumber(null)).toBe('–');
    expect(formatNumber(undefined)).toBe('–');
    expect(formatNumber(Number.NaN)).toBe('–');
  });

  it('writes credits, counts and durations with it', () => {
    expect(formatCredits(3)).toBe('3 cr');
    expect(formatCredits(null)).toBe('–');
    expect(formatCredits(0)).toBe('0 cr');
    expect(plural(1, 'row')).toBe('1 row');
    expect(plural(3, 'invalid row')).toBe('3 invalid rows');
    expect(plural(0, 'row')).toBe('0 rows');
  });
});

describe('durations', () => {
  it('are seconds under a minute, else minutes and seconds', () => {
    expect(formatDuration(12.34)).toBe('12.3 s');
    expect(formatDuration(40, 0)).toBe('40 s');
    expect(formatDuration(125)).toBe('2 min 5 s');
    expect(formatDuration(60)).toBe('1 min 0 s');
  });

  it('run from creation to completion, or to now while pending', () => {
    const created_at = '2026-05-02T12:00:00Z';
    const now = Date.parse('2026-05-02T12:00:30Z');
    expect(elapsedSeconds({ created_at, completed_at: '2026-05-02T12:00:05Z' }, now)).toBe(5);
    expect(elapsedSeconds({ created_at }, now)).toBe(30);
    expect(elapsedSeconds({}, now)).toBeNull();
    // a clock behind the service's never shows a negative time
    expect(elapsedSeconds({ created_at }, Date.parse('2026-05-02T11:59:00Z'))).toBe(0);
  });

  it('say how long the model usually takes only while pending', () => {
    const created_at = '2026-05-02T12:00:00Z';
    const now = Date.parse('2026-05-02T12:00:12Z');
    expect(timing({ status: 'pending', created_at }, 40, now)).toBe('12.0 s · usually ~40 s');
    expect(timing({ status: 'pending', created_at }, 90, now)).toBe('12.0 s · usually ~1 min 30 s');
    expect(timing({ status: 'pending', created_at }, null, now)).toBe('12.0 s');
    expect(timing({ status: 'completed', created_at }, 40, now)).toBe('12.0 s');
    expect(timing({ status: 'pending' }, 40, now)).toBe(' · usually ~40 s');
  });
});

describe('describeItem', () => {
  it('joins the label, the size and the duration', () => {
    expect(
      describeItem({
        key: 'k',
        kind: 'video',
        label: 'clip',
        width: 1280,
        height: 720,
        duration_seconds: 5
      })
    ).toBe('clip · 1280×720 · 5 s');
    expect(describeItem({ key: 'k', kind: 'audio' })).toBe('');
  });
});

describe('credentialsLine', () => {
  it('says who signed, which model made it and the verdict', () => {
    expect(
      credentialsLine({ status: 'valid', signer: 'Team CA signer', model: 'pixel-1' })
    ).toEqual({
      text: 'Content credentials: signed by Team CA signer · made by pixel-1 · valid',
      tone: 'ok'
    });
  });

  it('warns of an untrusted signer and flags tampering with its code', () => {
    expect(credentialsLine({ status: 'untrusted signer', signer: 'me' })).toEqual({
      text: 'Content credentials: signed by me · signer not in your trust list',
      tone: 'warn'
    });
    expect(credentialsLine({ status: 'tampered', code: 'assertion.dataHash.mismatch' })).toEqual({
      text: 'Content credentials: tampered (assertion.dataHash.mismatch)',
      tone: 'bad'
    });
    expect(credentialsLine({ status: 'unsigned' })?.tone).toBe('');
  });

  it('shows an unknown status as it is, as a warning', () => {
    expect(credentialsLine({ status: 'expired', code: 'x' })).toEqual({
      text: 'Content credentials: expired (x)',
      tone: 'warn'
    });
    expect(credentialsLine({ status: 'constructor' })?.tone).toBe('warn');
  });

  it('is nothing without credentials', () => {
    expect(credentialsLine(null)).toBeNull();
    expect(credentialsLine(undefined)).toBeNull();
  });
});

describe('statusTone', () => {
  it('colours a status by how it went', () => {
    expect(statusTone('completed')).toBe('ok');
    expect(statusTone('failed')).toBe('bad');
    expect(statusTone('pending')).toBe('warn');
    expect(statusTone('cancelled')).toBe('');
    expect(statusTone(undefined)).toBe('');
    expect(statusTone('constructor')).toBe('');
  });
});
