/**
 * mediagen in JupyterLab (and Notebook 7): the Generations sidebar, the credits status item,
 * the media viewer and the spend dashboard. Everything comes from the server extension
 * (`mediagen.jupyter_server`); the page never holds the API key.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Clipboard, ICommandPalette, MainAreaWidget, Notification } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import { Widget } from '@lumino/widgets';

import { Feed } from './feed';
import { generationsIcon } from './icons';
import { insertCode, Row } from './model';
import { GenerationsPanel } from './sidebar';
import { SpendPanel } from './spend';
import { StatusItem } from './status';
import { MediaViewer } from './viewer';

const COMMANDS = {
  open: 'mediagen:open-generations',
  spend: 'mediagen:open-spend'
};

function openInMain(app: JupyterFrontEnd, id: string, make: () => Widget): void {
  const existing = [...app.shell.widgets('main')].find(w => w.id === id);
  if (existing) {
    app.shell.activateById(id);
    return;
  }
  const content = make();
  const widget = new MainAreaWidget({ content });
  widget.id = id;
  widget.title.label = content.title.label;
  widget.title.caption = content.title.caption;
  widget.title.icon = content.title.icon;
  widget.title.closable = true;
  app.shell.add(widget, 'main');
  app.shell.activateById(id);
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: '@mediagen/jupyterlab:plugin',
  description: 'Every mediagen generation of your key, live, and the credits you spend.',
  autoStart: true,
  optional: [INotebookTracker, IStatusBar, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker | null,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null
  ) => {
    const feed = new Feed();

    const insert = (row: Row): void => {
      const panel = notebooks?.currentWidget;
      if (!panel) {
        Notification.warning('Open a notebook to insert the generation into.', {
          autoClose: 4000
        });
        return;
      }
      const notebook = panel.content;
      NotebookActions.insertBelow(notebook);
      notebook.activeCell?.model.sharedModel.setSource(insertCode(row.id));
      app.shell.activateById(panel.id);
    };

    const sidebar = new GenerationsPanel(feed, {
      open: row => openInMain(app, `mediagen-viewer-${row.id}`, () => new MediaViewer(row)),
      insert,
      copyId: async row => Clipboard.copyToSystem(row.id)
    });
    sidebar.title.icon = generationsIcon;
    sidebar.title.caption = 'mediagen generations';
    app.shell.add(sidebar, 'left', { rank: 850 });

    app.commands.addCommand(COMMANDS.open, {
      label: 'Show mediagen generations',
      execute: () => app.shell.activateById(sidebar.id)
    });
    app.commands.addCommand(COMMANDS.spend, {
      label: 'Open the mediagen spend dashboard',
      execute: () => openInMain(app, 'mediagen-spend-panel', () => new SpendPanel())
    });

    for (const command of Object.values(COMMANDS)) {
      palette?.addItem({ command, category: 'mediagen' });
    }

    if (statusBar) {
      const item = new StatusItem(feed, () => void app.commands.execute(COMMANDS.spend));
      statusBar.registerStatusItem('mediagen-status', {
        item,
        align: 'left',
        rank: 500
      });
    }
  }
};

export default plugin;
