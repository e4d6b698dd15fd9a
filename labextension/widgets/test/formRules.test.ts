import {
  advancedReasons,
  decode,
  encode,
  fieldHelp,
  fieldIssue,
  FieldSpec,
  layoutFields,
  readNumber,
  referenceOptions,
  selectChanges,
  selectValue,
  textValue
} from '../src/formRules';

function spec(overrides: Partial<FieldSpec>): FieldSpec {
  return { name: 'prompt', label: 'Prompt', control: 'text', ...overrides };
}

const size = spec({
  name: 'size',
  label: 'Size',
  control: 'select',
  help: 'Pixels.',
  options: [{ value: '1024x1024', label: 'Square' }],
  alternative: spec({
    name: 'aspect',
    label: 'Aspect ratio',
    control: 'select',
    help: 'Width to height.',
    merged_into: 'size',
    options: [{ value: '16:9', label: 'Wide' }]
  })
});

describe('layoutFields', () => {
  it('keeps the order, puts advanced fields apart and leaves out merged ones', () => {
    const specs = [
      spec({ name: 'prompt' }),
      spec({ name: 'seed', advanced: true }),
      size,
      spec({ name: 'aspect', merged_into: 'size' }),
      spec({ name: 'style', advanced: true })
    ];
    const { main, more } = layoutFields(specs);
    expect(main.map(s => s.name)).toEqual(['prompt', 'size']);
    expect(more.map(s => s.name)).toEqual(['seed', 'style']);
  });
});

describe('help and issues', () => {
  it("adds the alternative's help after the field's", () => {
    expect(fieldHelp(size)).toBe('Pixels. Or aspect ratio: Width to height.');
    expect(fieldHelp(spec({ help: 'What to draw.' }))).toBe('What to draw.');
    expect(fieldHelp(spec({}))).toBe('');
  });

  it("shows the field's issue, else its alternative's", () => {
    expect(fieldIssue(size, { size: 'too big' })).toBe('too big');
    expect(fieldIssue(size, { aspect: 'unknown ratio' })).toBe('unknown ratio');
    expect(fieldIssue(size, { size: 'too big', aspect: 'unknown ratio' })).toBe('too big');
    expect(fieldIssue(spec({}), { seed: 'not a number' })).toBe('');
  });
});

describe('values in controls', () => {
  it('travel as JSON, so 1 and "1" stay apart', () => {
    expect(encode(1)).toBe('1');
    expect(encode('1')).toBe('"1"');
    expect(encode(undefined)).toBe('null');
    expect(decode('1')).toBe(1);
    expect(decode('"1"')).toBe('1');
    expect(decode('not json')).toBe('not json');
  });

  it("show the alternative's value in a shared select when it is set", () => {
    expect(selectValue(size, '1024x1024', { size: '1024x1024', aspect: null })).toBe('"1024x1024"');
    expect(selectValue(size, null, { size: null, aspect: '16:9' })).toBe('aspect="16:9"');
    expect(selectValue(size, '1024x1024', { aspect: '' })).toBe('"1024x1024"');
    expect(selectValue(spec({ control: 'select' }), 3)).toBe('3');
  });

  it('choosing one of a shared select clears the other', () => {
    expect(selectChanges(size, '"1024x1024"')).toEqual({ size: '1024x1024', aspect: null });
    expect(selectChanges(size, 'aspect="16:9"')).toEqual({ size: null, aspect: '16:9' });
    expect(selectChanges(spec({ name: 'steps', control: 'select' }), '20')).toEqual({ steps: 20 });
  });

  it('read a number box: empty is no value', () => {
    expect(readNumber('')).toBeNull();
    expect(readNumber('2.5')).toBe(2.5);
  });

  it('write lists comma-separated and JSON indented', () => {
    expect(textValue('list', ['a', 'b'])).toBe('a, b');
    expect(textValue('text', 3)).toBe('3');
    expect(textValue('text', null)).toBe('');
    expect(textValue('json', { a: 1 })).toBe('{\n "a": 1\n}');
    expect(textValue('textarea', 'as typed')).toBe('as typed');
  });
});

describe('references', () => {
  const references = [
    { asset_id: 'a1', label: 'cat.png', kind: 'image' },
    { asset_id: 'a2', label: 'hum.wav', kind: 'audio' }
  ];

  it('a field offers those of its media kind, or all', () => {
    expect(referenceOptions(references, spec({ media: 'image' })).map(r => r.asset_id)).toEqual([
      'a1'
    ]);
    expect(referenceOptions(references, spec({})).length).toBe(2);
  });
});

describe('advancedReasons', () => {
  const seed = spec({ name: 'seed', control: 'number', advanced: true });
  const init = spec({ name: 'init_image', control: 'reference', advanced: true });
  const advancedSize = { ...size, advanced: true };

  it('names an advanced field with an issue, or its alternative with one', () => {
    expect(advancedReasons([seed], {}, { seed: 'not a number' })).toBe('seed!');
    expect(advancedReasons([advancedSize], {}, { aspect: 'unknown' })).toBe('size!');
    expect(advancedReasons([spec({ name: 'prompt' })], {}, { prompt: 'required' })).toBe('');
  });

  it('names a reference put in an advanced field, with its value', () => {
    expect(advancedReasons([init, seed], { init_image: 'a1', seed: 7 }, {})).toBe('init_image=a1');
    expect(advancedReasons([init], { init_image: ['a1', 'a2'] }, {})).toBe('init_image=a1,a2');
    expect(advancedReasons([init], { init_image: [] }, {})).toBe('');
    expect(advancedReasons([init], { init_image: null }, {})).toBe('');
  });
});
