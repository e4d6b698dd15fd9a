// The gallery's filters and what its cards say, apart from its DOM. The kernel filters the
// history (by kind, status and a search of the prompts); the view offers the choices and
// shows what came back.

import type { Credentials, MediaItem } from './format';

/** A filter's choices: [value sent to the kernel, label]; "" is no filter. */
export type FilterChoices = ReadonlyArray<readonly [string, string]>;

export const KIND_FILTERS: FilterChoices = [
  ['', 'All kinds'],
  ['image', 'Images'],
  ['video', 'Videos'],
  ['audio', 'Audio']
];

export const STATUS_FILTERS: FilterChoices = [
  ['', 'Any status'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['pending', 'Pending']
];

/** How long the search box waits for a pause in typing before it asks the kernel. */
export const SEARCH_DELAY_MS = 150;

/** A generation as the gallery gets it. */
export interface GalleryEntry {
  id: string;
  status: string;
  model: string;
  prompt: string;
  items: MediaItem[];
  error?: { code: string; message: string } | null;
  credits_charged?: number | null;
  settings_text?: string | null;
  credentials?: Credentials | null;
}

/** "12 of 40": the generations shown of all that match the filters. */
export function countText(shown: number, total: number | null | undefined): string {
  return `${shown} of ${total}`;
}

/** The keys of every item still shown: the media worth keeping loaded. */
export function shownKeys(entries: GalleryEntry[]): Set<string> {
  return new Set(entries.flatMap(entry => entry.items.map(item => item.key)));
}

/** What a card's slot says before its media load: "image 1280×720". */
export function slotLabel(item: MediaItem): string {
  return `${item.kind}${item.width ? ` ${item.width}×${item.height}` : ''}`;
}

/** The CSS aspect ratio that keeps a slot's place while its media load (not for audio, whose
 * controls have their own height). */
export function slotAspectRatio(item: MediaItem): string | null {
  return item.width && item.height && item.kind !== 'audio'
    ? `${item.width} / ${item.height}`
    : null;
}

/** The selection after a click on a card's Select button: a second click deselects. */
export function nextSelection(selected: string | null | undefined, clicked: string): string {
  return clicked === selected ? '' : clicked;
}
