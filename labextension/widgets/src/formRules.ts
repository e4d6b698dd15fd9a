// The request form's rules, apart from its DOM: which fields show where, what a field's help
// and issue say, how values travel in a <select> and a text box, and when "Advanced" opens by
// itself. The kernel owns the specs, values and issues; these only read them.

/** JSON as the kernel sends it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface Choice {
  value: Json;
  label: string;
}

/** A field the kernel describes (mediagen.widgets.form's field specs). */
export interface FieldSpec {
  name: string;
  label: string;
  control: string; // select, number, toggle, reference, textarea, json, text, list
  required?: boolean;
  advanced?: boolean;
  help?: string | null;
  options?: Choice[];
  /** another field offered in the same control ("or choose a preset"), shown inside this one */
  alternative?: FieldSpec | null;
  /** set on the alternative itself: the field whose control shows it */
  merged_into?: string | null;
  media?: string | null;
  multiple?: boolean;
  minimum?: number | null;
  maximum?: number | null;
  step?: number | null;
  max_length?: number | null;
}

export type Values = Record<string, Json | undefined>;
export type Issues = Record<string, string | undefined>;

/** A value as an option's value: JSON, so 1 and "1" stay apart. */
export function encode(value: Json | undefined): string {
  return JSON.stringify(value ?? null);
}

/** An option's value back as JSON (text that is not JSON stays text). */
export function decode(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The fields the form shows, in order, split into the main list and "Advanced". A field
 * merged into another shows inside that one's control, not on its own. */
export function layoutFields(specs: FieldSpec[]): { main: FieldSpec[]; more: FieldSpec[] } {
  const main: FieldSpec[] = [];
  const more: FieldSpec[] = [];
  for (const spec of specs) {
    if (spec.merged_into) continue;
    (spec.advanced ? more : main).push(spec);
  }
  return { main, more };
}

/** A field's help, with its alternative's after it: "Pick a size. Or preset: ...". */
export function fieldHelp(spec: FieldSpec): string {
  const alt = spec.alternative;
  return [spec.help, alt && alt.help ? `Or ${alt.label.toLowerCase()}: ${alt.help}` : '']
    .filter(Boolean)
    .join(' ');
}

/** The issue to show under a field: its own, else its alternative's (they share a control). */
export function fieldIssue(spec: FieldSpec, issues: Issues): string {
  const alt = spec.alternative;
  return issues[spec.name] || (alt && issues[alt.name]) || '';
}

/** The prefix an alternative's option values carry in a shared <select>. */
export function alternativePrefix(spec: FieldSpec): string | null {
  return spec.alternative ? `${spec.alternative.name}=` : null;
}

/** The <select> value showing `value`, or the alternative's when that one is set. */
export function selectValue(spec: FieldSpec, value: Json | undefined, values?: Values): string {
  const alt = spec.alternative;
  const other = alt && values ? values[alt.name] : null;
  return alt && other !== null && other !== undefined && other !== ''
    ? `${alt.name}=${encode(other)}`
    : encode(value);
}

/** What choosing `raw` in a field's <select> changes: the field, and its alternative cleared
 * (or the alternative set and the field cleared). */
export function selectChanges(spec: FieldSpec, raw: string): Values {
  const alt = spec.alternative;
  const prefix = alternativePrefix(spec);
  if (alt && prefix && raw.startsWith(prefix)) {
    return { [spec.name]: null, [alt.name]: decode(raw.slice(prefix.length)) };
  }
  return alt ? { [spec.name]: decode(raw), [alt.name]: null } : { [spec.name]: decode(raw) };
}

/** A number box's text as a value: empty is no value. */
export function readNumber(text: string): number | null {
  return text === '' ? null : Number(text);
}

/** A value as the text a text box shows: a list comma-separated, JSON indented in a textarea. */
export function textValue(control: string, value: Json | undefined): string {
  if (value === null || value === undefined) return '';
  if (control === 'textarea' || control === 'json') {
    return typeof value === 'string' ? value : JSON.stringify(value, null, 1);
  }
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** An uploaded or produced file the kernel offers as a reference. */
export interface Reference {
  asset_id: string;
  label: string;
  kind: string;
}

/** The references a field accepts: those of its media kind, or all when it names none. */
export function referenceOptions(references: Reference[], spec: FieldSpec): Reference[] {
  return references.filter(r => !spec.media || r.kind === spec.media);
}

/** Why "Advanced" should be open, as one key: a field in it with an issue, or a reference
 * put there. The form opens it when the key changes, so a user who closed it again is not
 * overruled on every keystroke. */
export function advancedReasons(specs: FieldSpec[], values: Values, issues: Issues): string {
  const reasons: string[] = [];
  for (const spec of specs) {
    if (!spec.advanced || spec.merged_into) continue;
    const alt = spec.alternative;
    const value = values[spec.name];
    if (issues[spec.name] || (alt && issues[alt.name])) reasons.push(`${spec.name}!`);
    if (
      spec.control === 'reference' &&
      value &&
      (typeof value === 'string' || Array.isArray(value)) &&
      value.length
    ) {
      reasons.push(`${spec.name}=${value}`);
    }
  }
  return reasons.join(' ');
}
