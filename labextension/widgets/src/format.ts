// How the views write numbers, durations and content credentials. Pure functions of their
// arguments (no DOM), so the unit tests run them in Node.

/** Numbers as stated (up to 2 decimals), never rounded into something else. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return Number(value).toLocaleString(undefined, { maximumFractionDigits: 2 });
}

/** "12 cr", or "–" when there is no figure yet. */
export function formatCredits(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${formatNumber(value)} cr`;
}

/** "3 rows", "1 row": a count with its noun. */
export function plural(n: number, word: string): string {
  return `${formatNumber(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** "12.3 s" under a minute, else "2 min 5 s" (`digits` decimals for the seconds alone). */
export function formatDuration(seconds: number, digits = 1): string {
  return seconds < 60
    ? `${seconds.toFixed(digits)} s`
    : `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** What the job view needs of a generation to time it. */
export interface Timed {
  status?: string;
  created_at?: string | null;
  completed_at?: string | null;
}

/** Seconds since the generation was created, to when it completed (or `now`, in ms). */
export function elapsedSeconds(gen: Timed, now: number = Date.now()): number | null {
  if (!gen.created_at) return null;
  const start = Date.parse(gen.created_at);
  const end = gen.completed_at ? Date.parse(gen.completed_at) : now;
  return Math.max(0, (end - start) / 1000);
}

/** "12.3 s" while pending, with "· usually ~40 s" when the user's history knows the model. */
export function timing(gen: Timed, expected: number | null | undefined, now?: number): string {
  const seconds = elapsedSeconds(gen, now);
  const text = seconds === null ? '' : formatDuration(seconds);
  if (gen.status !== 'pending' || expected === null || expected === undefined) return text;
  return `${text} · usually ~${formatDuration(expected, 0)}`;
}

/** A media item as the kernel describes it. */
export interface MediaItem {
  key: string;
  kind: string;
  label?: string;
  content_type?: string;
  width?: number;
  height?: number;
  duration_seconds?: number;
  filename?: string;
  credentials?: Credentials | null;
}

/** "1280×720 · 5 s · video/mp4" */
export function describeItem(item: MediaItem): string {
  const parts: string[] = [];
  if (item.label) parts.push(item.label);
  if (item.width && item.height) parts.push(`${item.width}×${item.height}`);
  if (item.duration_seconds) parts.push(`${formatNumber(item.duration_seconds)} s`);
  return parts.join(' · ');
}

/** What a saved output's content credentials say (mediagen.provenance's verdict). */
export interface Credentials {
  status: string;
  code?: string | null;
  signer?: string | null;
  model?: string | null;
}

/** One line for the credentials and the tone to show it in: "ok", "warn", "bad" or "". */
export interface CredentialsLine {
  text: string;
  tone: string;
}

const VERDICTS: Record<string, (code: string) => [string, string]> = {
  valid: () => ['valid', 'ok'],
  'untrusted signer': () => ['signer not in your trust list', 'warn'],
  unsigned: () => ['unsigned, recorded beside the file', ''],
  tampered: code => [`tampered${code}`, 'bad']
};

/** What a saved output's content credentials say, in one line, and the tone to show it in:
 * "Content credentials: signed by Team CA signer · made by pixel-1 · valid". */
export function credentialsLine(c: Credentials | null | undefined): CredentialsLine | null {
  if (!c) return null;
  const code = c.code ? ` (${c.code})` : '';
  const verdict = Object.prototype.hasOwnProperty.call(VERDICTS, c.status)
    ? VERDICTS[c.status](code)
    : [`${c.status}${code}`, 'warn'];
  const parts = [
    c.signer ? `signed by ${c.signer}` : null,
    c.model ? `made by ${c.model}` : null,
    verdict[0]
  ];
  return { text: `Content credentials: ${parts.filter(Boolean).join(' · ')}`, tone: verdict[1] };
}

const TONES: Record<string, string> = { completed: 'ok', failed: 'bad', pending: 'warn' };

/** The badge tone of a generation's status. */
export function statusTone(status: string | null | undefined): string {
  return status && Object.prototype.hasOwnProperty.call(TONES, status) ? TONES[status] : '';
}
