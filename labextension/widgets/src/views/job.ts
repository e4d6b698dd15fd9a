// Job card: status, elapsed time, credits, error, and inline players with actions.
import { credentialsLine, formatNumber, statusTone, timing, type MediaItem } from '../format';
import type { Experimental, RenderProps } from '../model';
import { fetchMediaUrl, h, listen, mediaFigure, styled, type Figure } from '../shared';

// The browser's own download of an output (the bytes come from the kernel's local copy).
async function download(experimental: Experimental, item: MediaItem) {
  const url = await fetchMediaUrl(experimental, item.key);
  const link = h('a', {
    href: url,
    download: item.filename || item.label || 'output',
    style: 'display:none'
  });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function render({ model, el, experimental }: RenderProps) {
  const header = h('div', { class: 'mg-row' });
  const facts = h('div', { class: 'mg-row mg-muted' });
  const error = h('div', { class: 'mg-error', role: 'alert' });
  const media = h('div', { class: 'mg-job-media' });
  const notice = h('div', { class: 'mg-muted mg-job-notice', 'aria-live': 'polite' });
  const saveTo = h('div', {
    class: 'mg-muted mg-job-save-to',
    id: `mg-save-${Math.random().toString(36).slice(2, 8)}`
  });
  const root = h(
    'div',
    { class: 'mg-root mg-card mg-stack mg-job', 'aria-live': 'polite' },
    header,
    facts,
    error,
    media,
    saveTo,
    notice
  );
  el.append(root);
  let figures: Figure[] = [];
  let mediaKey = '';

  const renderText = () => {
    const gen = model.get('generation') || {};
    root.dataset.status = gen.status || '';
    const tone = statusTone(gen.status);
    header.replaceChildren(
      h(
        'span',
        { class: `mg-badge mg-badge--${tone} mg-job-status`, role: 'status' },
        gen.status || '?'
      ),
      h('strong', {}, gen.model || ''),
      h('span', { class: 'mg-muted' }, gen.type || ''),
      h(
        'span',
        { class: 'mg-muted mg-job-prompt', title: gen.prompt },
        (gen.prompt || '').slice(0, 80)
      )
    );
    const reserved = model.get('reserved');
    const credits =
      gen.status === 'completed'
        ? `charged ${formatNumber(gen.credits_charged)} credits`
        : gen.status === 'failed'
          ? 'nothing charged (reservation returned)'
          : reserved != null
            ? `reserved ${formatNumber(reserved)} credits`
            : 'credits reserved';
    const held = gen.status === 'pending' ? model.get('rate_note') || '' : '';
    facts.replaceChildren(
      h('span', { class: 'mg-job-elapsed' }, timing(gen, model.get('expected_s'))),
      h('span', { class: 'mg-job-credits' }, credits),
      h('code', { class: 'mg-muted' }, gen.id || ''),
      ...(held ? [h('span', { class: 'mg-job-rate', role: 'status' }, held)] : [])
    );
    const err = gen.error;
    error.textContent = err ? `${err.code}: ${err.message}` : model.get('error') || '';
    notice.textContent = model.get('notice') || '';
    const items = model.get('items') || [];
    saveTo.textContent = items.length ? `Save writes to ${model.get('save_dir')}` : '';
  };

  const renderMedia = () => {
    const items = model.get('items') || [];
    const key = items.map(i => i.key).join(',');
    if (key === mediaKey) return;
    mediaKey = key;
    for (const f of figures) f.dispose();
    figures = [];
    const images = items.filter(i => i.kind === 'image').length;
    media.className = 'mg-job-media' + (images > 1 ? ' mg-grid' : ' mg-stack');
    media.replaceChildren(
      ...items.map((item, index) => {
        const figure = mediaFigure(experimental, item);
        figures.push(figure);
        const act = (action: string) => () => model.send({ action, index });
        const fetchFile = () =>
          download(experimental, item).catch(err => {
            notice.textContent = `Download failed: ${err && err.message ? err.message : err}`;
          });
        const said = credentialsLine(item.credentials);
        const credentials = said
          ? h(
              'div',
              {
                class: `mg-job-credentials mg-tone--${said.tone || 'muted'}`,
                dataset: { status: item.credentials.status }
              },
              said.text
            )
          : null;
        return h(
          'div',
          { class: 'mg-stack mg-job-output', dataset: { index } },
          figure.node,
          credentials,
          h(
            'div',
            { class: 'mg-row' },
            h(
              'button',
              {
                type: 'button',
                class: 'mg-button mg-use-reference',
                onclick: act('reference'),
                'aria-label': `Use output ${index + 1} as reference`
              },
              'Use as reference'
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'mg-button mg-save',
                onclick: act('save'),
                'aria-label': `Save output ${index + 1}`,
                'aria-describedby': saveTo.id
              },
              'Save'
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'mg-button mg-download',
                onclick: fetchFile,
                'aria-label': `Download output ${index + 1}`
              },
              'Download'
            )
          )
        );
      })
    );
  };

  const tick = setInterval(() => {
    const gen = model.get('generation') || {};
    if (gen.status === 'pending')
      facts.querySelector('.mg-job-elapsed')!.textContent = timing(gen, model.get('expected_s'));
  }, 500);
  renderText();
  renderMedia();
  const unlisten = listen(model, {
    'change:generation change:reserved change:error change:notice change:save_dir change:rate_note':
      renderText,
    'change:items': () => {
      renderMedia();
      renderText();
    }
  });
  return () => {
    clearInterval(tick);
    unlisten();
    for (const f of figures) f.dispose();
  };
}

export default styled({ render });
