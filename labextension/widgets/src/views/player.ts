// One inline player (<img>, <video controls> or <audio controls>) for a file in the kernel.
import type { RenderProps } from '../model';
import { errorBanner, h, mediaFigure, styled, type Figure } from '../shared';

function render({ model, el, experimental }: RenderProps) {
  const root = h('div', { class: 'mg-root mg-player' });
  const slot = h('div', {});
  const banner = errorBanner(model);
  root.append(slot, banner.node);
  el.append(root);

  let current: Figure | null = null;
  const show = () => {
    if (current) current.dispose();
    current = null;
    slot.replaceChildren();
    const item = model.get('item');
    if (!item || !item.key) {
      slot.append(h('div', { class: 'mg-placeholder' }, 'No media'));
      return;
    }
    current = mediaFigure(experimental, item, { caption: model.get('caption') });
    slot.append(current.node);
  };
  show();
  model.on('change:item', show);
  return () => {
    model.off('change:item', show);
    banner.dispose();
    if (current) current.dispose();
  };
}

export default styled({ render });
