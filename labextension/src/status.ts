/**
 * The status bar item: balance, today's spend, a spend limit's remainder; warns when low. It
 * wants the credits for as long as it is on the page, sidebar shown or not.
 */
import { Widget } from '@lumino/widgets';

import { Feed } from './feed';
import { isLow, Snapshot, statusText } from './model';

export class StatusItem extends Widget {
  constructor(
    private _feed: Feed,
    private _onClick: () => void
  ) {
    super({ node: document.createElement('button') });
    this.id = 'mediagen-status';
    this.addClass('mg-lab-statusitem');
    const button = this.node as HTMLButtonElement;
    button.type = 'button';
    button.title = 'mediagen: open the spend dashboard';
    button.setAttribute('aria-label', 'mediagen credits: open the spend dashboard');
    button.addEventListener('click', () => this._onClick());
    this._show(_feed.snapshot);
    _feed.changed.connect((_, snap) => this._show(snap), this);
    _feed.want(this.id, 'credits');
  }

  dispose(): void {
    this._feed.release(this.id);
    super.dispose();
  }

  private _show(snap: Snapshot | null): void {
    const credits = snap && snap.configured ? snap.credits : null;
    this.node.textContent = statusText(credits);
    if (credits && credits.balance !== null && credits.balance !== undefined) {
      this.node.dataset.balance = String(credits.balance);
    }
    this.node.classList.toggle('mg-lab-low', isLow(credits) || !!credits?.limit_error);
    this.node.title = credits?.limit_error
      ? `mediagen: ${credits.limit_error}`
      : 'mediagen: open the spend dashboard';
  }
}
