/**
 * What the sidebar shows, as plain data and pure functions: the rows the server extension
 * sends, the filters, the progress toward a forecast, the code "Insert" adds. No JupyterLab
 * import here, so jest tests it as it is.
 */

export type Status = 'pending' | 'completed' | 'failed';

export interface OutputInfo {
  index: number;
  content_type: string | null;
  duration_seconds: number | null;
}

export interface Row {
  id: string;
  type: string | null;
  status: Status;
  model: string | null;
  mode: string | null;
  prompt: string | null;
  created_at: string | null;
  completed_at: string | null;
  credits_charged: number | null;
  error: { code: string | null; message: string | null } | null;
  outputs: OutputInfo[];
  forecast_seconds: number | null;
  /** What the estimate endpoint quotes for a running job, when its own fields price it. */
  estimate_credits?: number | null;
}

export interface CreditsInfo {
  balance: number | null;
  spent_today: number;
  limit_remaining: number | null;
  member_limit_remaining: number | null;
  /** Why the spend limit is not shown: its setting is not a number of credits. */
  limit_error?: string | null;
}

export interface Snapshot {
  version: number;
  configured: boolean;
  help?: string | null;
  polling?: boolean;
  error?: string | null;
  credits?: CreditsInfo | null;
  generations?: Row[];
}

export interface Filters {
  running: boolean;
  failed: boolean;
  today: boolean;
  model: string;
  search: string;
}

export const NO_FILTERS: Filters = {
  running: false,
  failed: false,
  today: false,
  model: '',
  search: ''
};

/** Midnight UTC of `now`: the day the service's timestamps count in. */
export function startOfToday(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/** The rows the filters let through, newest first as they came. */
export function filterRows(rows: Row[], filters: Filters, now: Date): Row[] {
  const today = startOfToday(now).getTime();
  const words = filters.search.trim().toLowerCase().split(/\s+/).filter(Boolean);
  return rows.filter(row => {
    if (filters.running && row.status !== 'pending') {
      return false;
    }
    if (filters.failed && row.status !== 'failed') {
      return false;
    }
    if (filters.today && (!row.created_at || Date.parse(row.created_at) < today)) {
      return false;
    }
    if (filters.model && row.model !== filters.model) {
      return false;
    }
    const haystack = [row.id, row.model, row.mode, row.prompt, row.status, row.type]
      .join(' ')
      .toLowerCase();
    return words.every(word => haystack.includes(word));
  });
}

/** Every model seen, sorted: the model filter's choices. */
export function modelsOf(rows: Row[]): string[] {
  return [...new Set(rows.map(row => row.model).filter((m): m is string => !!m))].sort();
}

/**
 * How far a running job is toward its forecast time, 0..1. It never reads 1 while running:
 * past its forecast a job stays at 95% until it settles.
 */
export function progressOf(row: Row, now: Date): number {
  if (row.status !== 'pending') {
    return 1;
  }
  if (!row.created_at || !row.forecast_seconds || row.forecast_seconds <= 0) {
    return 0;
  }
  const elapsed = (now.getTime() - Date.parse(row.created_at)) / 1000;
  return Math.max(0, Math.min(0.95, elapsed / row.forecast_seconds));
}

/** `1,234.5 credits` (at most two decimals). */
export function formatCredits(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) {
    return '–';
  }
  const shown = value.toLocaleString('en-US', { maximumFractionDigits: 2 });
  return `${shown} ${Math.abs(value) === 1 ? 'credit' : 'credits'}`;
}

/** The cost column: the charge once known, else what the job is doing. */
export function costLabel(row: Row): string {
  if (row.credits_charged !== null) {
    return formatCredits(row.credits_charged);
  }
  if (row.status === 'failed') {
    return 'not charged';
  }
  if (row.estimate_credits !== null && row.estimate_credits !== undefined) {
    return `≈ ${formatCredits(row.estimate_credits)} reserved`;
  }
  return 'reserved, charged when done';
}

export type MediaKind = 'image' | 'video' | 'audio' | 'file';

export function mediaKind(output: OutputInfo, type: string | null): MediaKind {
  const major = (output.content_type || '').split('/')[0];
  if (major === 'image' || major === 'video' || major === 'audio') {
    return major;
  }
  if (type === 'image' || type === 'video' || type === 'audio') {
    return type;
  }
  return 'file';
}

/** The cell "Insert" adds: it binds the generation by id with the kernel's own client. */
export function insertCode(id: string): string {
  return `import mediagen as mg\n\ngen = mg.Client().generations.get(${JSON.stringify(id)})\ngen`;
}

/** Under this many credits the status bar shows its warning colour. */
export const LOW_BALANCE = 20;

export function isLow(credits: CreditsInfo | null | undefined): boolean {
  if (!credits) {
    return false;
  }
  const left = [credits.balance, credits.limit_remaining, credits.member_limit_remaining].filter(
    (v): v is number => v !== null && v !== undefined
  );
  return left.some(v => v < LOW_BALANCE);
}

/** The status bar's words: balance, today's spend, what a spend limit leaves. */
export function statusText(credits: CreditsInfo | null | undefined): string {
  if (!credits) {
    return 'mediagen';
  }
  const parts = [formatCredits(credits.balance), `today ${formatCredits(credits.spent_today)}`];
  if (credits.limit_remaining !== null && credits.limit_remaining !== undefined) {
    parts.push(`limit ${formatCredits(credits.limit_remaining)} left`);
  } else if (credits.limit_error) {
    parts.push('limit setting invalid');
  }
  return parts.join(' · ');
}
