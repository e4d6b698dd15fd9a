import {
  costLabel,
  filterRows,
  formatCredits,
  insertCode,
  isLow,
  mediaKind,
  modelsOf,
  NO_FILTERS,
  progressOf,
  Row,
  statusText
} from '../src/model';

const NOW = new Date('2026-05-02T12:00:00Z');

function row(overrides: Partial<Row>): Row {
  return {
    id: 'gen-1',
    type: 'image',
    status: 'completed',
    model: 'pixel-pro',
    mode: 'default',
    prompt: 'a red kite',
    created_at: '2026-05-02T11:59:00Z',
    completed_at: '2026-05-02T11:59:05Z',
    credits_charged: 0.5,
    error: null,
    outputs: [{ index: 0, content_type: 'image/png', duration_seconds: null }],
    forecast_seconds: null,
    ...overrides
  };
}

const ROWS = [
  row({ id: 'run', status: 'pending', credits_charged: null, model: 'vidra-2' }),
  row({ id: 'bad', status: 'failed', credits_charged: null, prompt: 'a storm' }),
  row({ id: 'old', created_at: '2026-05-01T23:00:00Z', prompt: 'yesterday kite' }),
  row({ id: 'ok' })
];

function ids(rows: Row[]): string[] {
  return rows.map(r => r.id);
}

describe('filterRows', () => {
  it('keeps everything without filters, in order', () => {
    expect(ids(filterRows(ROWS, NO_FILTERS, NOW))).toEqual(['run', 'bad', 'old', 'ok']);
  });
  it('running, failed, today and model each narrow the list', () => {
    expect(ids(filterRows(ROWS, { ...NO_FILTERS, running: true }, NOW))).toEqual(['run']);
    expect(ids(filterRows(ROWS, { ...NO_FILTERS, failed: true }, NOW))).toEqual(['bad']);
    expect(ids(filterRows(ROWS, { ...NO_FILTERS, today: true }, NOW))).toEqual([
      'run',
      'bad',
      'ok'
    ]);
    expect(ids(filterRows(ROWS, { ...NO_FILTERS, model: 'vidra-2' }, NOW))).toEqual(['run']);
  });
  it('search matches every word in prompt, model or id, ignoring case', () => {
    expect(ids(filterRows(ROWS, { ...NO_FILTERS, search: 'KITE yesterday' }, NOW))).toEqual([
      'old'
    ]);
    expect(ids(filterRows(ROWS, { ...NO_FILTERS, search: 'vidra' }, NOW))).toEqual(['run']);
    expect(ids(filterRows(ROWS, { ...NO_FILTERS, search: 'nothing' }, NOW))).toEqual([]);
  });
});

describe('progressOf', () => {
  it('measures a running job against its forecast and never reaches the end', () => {
    const running = row({ status: 'pending', created_at: '2026-05-02T11:59:50Z' });
    expect(progressOf({ ...running, forecast_seconds: 20 }, NOW)).toBeCloseTo(0.5);
    expect(progressOf({ ...running, forecast_seconds: 2 }, NOW)).toBe(0.95);
    expect(progressOf({ ...running, forecast_seconds: null }, NOW)).toBe(0);
    expect(progressOf(row({}), NOW)).toBe(1);
  });
});

describe('labels', () => {
  it('formats credits', () => {
    expect(formatCredits(1234.5)).toBe('1,234.5 credits');
    expect(formatCredits(1)).toBe('1 credit');
    expect(formatCredits(null)).toBe('–');
  });
  it('says what a job costs or will cost', () => {
    expect(costLabel(row({}))).toBe('0.5 credits');
    expect(costLabel(row({ status: 'failed', credits_charged: null }))).toBe('not charged');
    expect(costLabel(row({ status: 'pending', credits_charged: null }))).toBe(
      'reserved, charged when done'
    );
    const quoted = row({ status: 'pending', credits_charged: null, estimate_credits: 20 });
    expect(costLabel(quoted)).toBe('≈ 20 credits reserved');
    expect(costLabel({ ...quoted, estimate_credits: null })).toBe('reserved, charged when done');
    expect(costLabel({ ...quoted, status: 'completed', credits_charged: 19.5 })).toBe(
      '19.5 credits'
    );
  });
  it('knows the media kind from the content type, else the job type', () => {
    expect(mediaKind({ index: 0, content_type: 'video/mp4', duration_seconds: 5 }, 'video')).toBe(
      'video'
    );
    expect(mediaKind({ index: 0, content_type: null, duration_seconds: 3 }, 'audio')).toBe('audio');
    expect(
      mediaKind({ index: 0, content_type: 'application/zip', duration_seconds: null }, null)
    ).toBe('file');
  });
  it('lists the models seen once each, sorted', () => {
    expect(modelsOf(ROWS)).toEqual(['pixel-pro', 'vidra-2']);
  });
  it('inserts code that binds the generation by id, quoted safely', () => {
    expect(insertCode('abc')).toBe(
      'import mediagen as mg\n\ngen = mg.Client().generations.get("abc")\ngen'
    );
    expect(insertCode('a"b')).toContain('get("a\\"b")');
  });
  it('warns under the threshold, on the balance or what a limit leaves', () => {
    const base = {
      balance: 500,
      spent_today: 3,
      limit_remaining: null,
      member_limit_remaining: null
    };
    expect(isLow(base)).toBe(false);
    expect(isLow({ ...base, balance: 5 })).toBe(true);
    expect(isLow({ ...base, limit_remaining: 2 })).toBe(true);
    expect(statusText(base)).toBe('500 credits · today 3 credits');
    expect(statusText({ ...base, limit_remaining: 40 })).toBe(
      '500 credits · today 3 credits · limit 40 credits left'
    );
    expect(statusText(null)).toBe('mediagen');
  });
  it('names a spend-limit setting it cannot read, beside the balance', () => {
    const bad = {
      balance: 500,
      spent_today: 3,
      limit_remaining: null,
      member_limit_remaining: null,
      limit_error: "MEDIAGEN_SPEND_LIMIT_DAILY='nan' is not a number of credits >= 0"
    };
    expect(statusText(bad)).toBe('500 credits · today 3 credits · limit setting invalid');
  });
});
