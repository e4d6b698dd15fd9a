/** The spend dashboard: credits charged per day and model over the last 30 days. */
import { Widget } from '@lumino/widgets';

import { requestAPI } from './api';
import { spendIcon } from './icons';
import { formatCredits } from './model';

interface SpendDay {
  day: string;
  models: Record<string, number>;
  total: number;
}

interface Spend {
  configured: boolean;
  help?: string;
  since?: string;
  days: SpendDay[];
  total: number;
}

export class SpendPanel extends Widget {
  constructor() {
    super();
    this.id = 'mediagen-spend';
    this.addClass('mg-lab-spend');
    this.title.label = 'mediagen spend';
    this.title.closable = true;
    this.title.icon = spendIcon;
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'mediagen spend by day and model');
  }

  protected onAfterAttach(): void {
    void this.refresh();
  }

  async refresh(): Promise<void> {
    let spend: Spend;
    try {
      spend = await requestAPI<Spend>('spend?days=30');
    } catch (error) {
      this.node.textContent = `Could not read the spend: ${(error as Error).message}`;
      return;
    }
    const heading = document.createElement('h2');
    heading.textContent = 'Spend by day and model';
    if (!spend.configured) {
      const help = document.createElement('p');
      help.textContent = spend.help || '';
      this.node.replaceChildren(heading, help);
      return;
    }
    const models = [...new Set(spend.days.flatMap(d => Object.keys(d.models)))].sort();
    const table = document.createElement('table');
    table.className = 'mg-lab-spend-table';
    const caption = document.createElement('caption');
    caption.textContent = `Since ${spend.since}: ${formatCredits(spend.total)}`;
    const head = table.createTHead().insertRow();
    for (const name of ['Day', ...models, 'Total']) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = name;
      head.appendChild(th);
    }
    const body = table.createTBody();
    for (const day of spend.days) {
      const row = body.insertRow();
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = day.day;
      row.appendChild(th);
      for (const model of models) {
        row.insertCell().textContent = day.models[model] ? String(day.models[model]) : '';
      }
      row.insertCell().textContent = String(day.total);
    }
    table.prepend(caption);
    this.node.replaceChildren(heading, table);
  }
}
