// A long operation's progress (a wait, a history fetch, a batch, a table run): its name, a bar,
// and a line of counts, message and time. The bar is indeterminate while neither a total nor
// a usual duration is known: a bar that fills towards nothing would read as stalled, a full
// one as done.
import type { RenderProps } from '../model';
import { h, listen, styled } from '../shared';

function render({ model, el }: RenderProps) {
  const title = h('span', { class: 'mg-progress-title' });
  const bar = h('progress', { class: 'mg-progress-bar' });
  const line = h('span', { class: 'mg-muted mg-progress-line', 'aria-live': 'polite' });
  el.append(h('div', { class: 'mg-root mg-row mg-progress' }, title, bar, line));

  const update = () => {
    const description: string = model.get('description') || '';
    const max: number = model.get('max') || 0;
    title.textContent = description;
    bar.setAttribute('aria-label', description || 'Progress');
    if (max > 0) {
      bar.max = max;
      bar.value = Math.min(model.get('value') || 0, max);
    } else {
      bar.removeAttribute('value'); // indeterminate: the browser animates it
    }
    line.textContent = model.get('line') || '';
  };
  update();
  return listen(model, { 'change:description change:value change:max change:line': update });
}

export default styled({ render });
