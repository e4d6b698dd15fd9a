/** mediagen's icons: one per kind of tab, so a spend table or a sound never wears a picture. */
import { LabIcon } from '@jupyterlab/ui-components';

import { MediaKind } from './model';

import audioSvg from '../style/audio.svg';
import generationsSvg from '../style/icon.svg';
import spendSvg from '../style/spend.svg';
import videoSvg from '../style/video.svg';

export const generationsIcon = new LabIcon({
  name: 'mediagen:generations',
  svgstr: generationsSvg
});
export const spendIcon = new LabIcon({ name: 'mediagen:spend', svgstr: spendSvg });
export const audioIcon = new LabIcon({ name: 'mediagen:audio', svgstr: audioSvg });
export const videoIcon = new LabIcon({ name: 'mediagen:video', svgstr: videoSvg });

export function iconOfKind(kind: MediaKind): LabIcon {
  return kind === 'audio' ? audioIcon : kind === 'video' ? videoIcon : generationsIcon;
}
