import {
  countText,
  GalleryEntry,
  KIND_FILTERS,
  nextSelection,
  shownKeys,
  slotAspectRatio,
  slotLabel,
  STATUS_FILTERS
} from '../src/galleryRules';

function entry(id: string, keys: string[]): GalleryEntry {
  return {
    id,
    status: 'completed',
    model: 'pixel-1',
    prompt: 'a fox',
    items: keys.map(key => ({ key, kind: 'image' }))
  };
}

describe('the filters', () => {
  it('start with "no filter" and offer the kinds and statuses the kernel filters by', () => {
    expect(KIND_FILTERS[0]).toEqual(['', 'All kinds']);
    expect(KIND_FILTERS.map(([value]) => value)).toEqual(['', 'image', 'video', 'audio']);
    expect(STATUS_FILTERS[0]).toEqual(['', 'Any status']);
    expect(STATUS_FILTERS.map(([value]) => value)).toEqual(['', 'completed', 'failed', 'pending']);
  });

  it('count what is shown of all that match', () => {
    expect(countText(12, 40)).toBe('12 of 40');
    expect(countText(0, 0)).toBe('0 of 0');
  });
});

describe('the cards', () => {
  it('keep loaded the media of every entry still shown', () => {
    expect([...shownKeys([entry('g1', ['a', 'b']), entry('g2', ['c'])])]).toEqual(['a', 'b', 'c']);
    expect(shownKeys([]).size).toBe(0);
  });

  it('hold a slot of the media size while they load (not for audio)', () => {
    expect(slotLabel({ key: 'k', kind: 'image', width: 1280, height: 720 })).toBe('image 1280×720');
    expect(slotLabel({ key: 'k', kind: 'audio' })).toBe('audio');
    expect(slotAspectRatio({ key: 'k', kind: 'video', width: 1280, height: 720 })).toBe(
      '1280 / 720'
    );
    expect(slotAspectRatio({ key: 'k', kind: 'audio', width: 1, height: 1 })).toBeNull();
    expect(slotAspectRatio({ key: 'k', kind: 'image' })).toBeNull();
  });

  it('select one generation; a second click deselects it', () => {
    expect(nextSelection('', 'g1')).toBe('g1');
    expect(nextSelection('g1', 'g2')).toBe('g2');
    expect(nextSelection('g1', 'g1')).toBe('');
  });
});
