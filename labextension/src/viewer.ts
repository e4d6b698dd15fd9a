/** A generation's media in a main-area tab: images shown, video and audio playable. */
import { Widget } from '@lumino/widgets';

import { mediaUrl } from './api';
import { iconOfKind } from './icons';
import { formatCredits, mediaKind, Row } from './model';

export class MediaViewer extends Widget {
  constructor(row: Row) {
    super();
    this.id = `mediagen-viewer-${row.id}`;
    this.addClass('mg-lab-viewer');
    this.title.label = `${row.model} · ${row.id.slice(0, 8)}`;
    this.title.caption = row.prompt || row.id;
    this.title.closable = true;
    this.title.icon = iconOfKind(row.outputs[0] ? mediaKind(row.outputs[0], row.type) : 'file');
    this.node.dataset.generationId = row.id;
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', `Generation ${row.id}`);

    const heading = document.createElement('h2');
    heading.textContent = row.prompt || row.id;
    const facts = document.createElement('p');
    facts.className = 'mg-lab-viewer-facts';
    facts.textContent = [row.model, row.mode, row.type, formatCredits(row.credits_charged)]
      .filter(Boolean)
      .join(' · ');
    this.node.append(heading, facts);
    for (const output of row.outputs) {
      const kind = mediaKind(output, row.type);
      const src = mediaUrl(row.id, output.index);
      let media: HTMLElement;
      if (kind === 'image') {
        const img = document.createElement('img');
        img.src = src;
        img.alt = `Output ${output.index + 1} of ${row.model}: ${row.prompt || ''}`.trim();
        media = img;
      } else if (kind === 'video' || kind === 'audio') {
        const player = document.createElement(kind);
        player.controls = true;
        player.preload = 'auto';
        player.src = src;
        player.setAttribute('aria-label', `${kind} output ${output.index + 1} of ${row.model}`);
        media = player;
      } else {
        const link = document.createElement('a');
        link.href = src;
        link.textContent = `Download output ${output.index + 1}`;
        media = link;
      }
      media.classList.add('mg-lab-media');
      this.node.appendChild(media);
    }
  }
}
