// Bundles each widget view (widgets/src/views/<view>.ts) into the ES module anywidget loads,
// src/mediagen/widgets/static/<view>.js: one self-contained file per view (anywidget loads a
// module from a Blob or data: URL, where no relative import resolves), not minified so a
// browser's devtools show it as written.
//
// The shared stylesheet, mediagen.css, stays a real file beside the built modules (Python
// reads it too) and goes into each module as a string with its hash: shared.ts puts it in the
// page once and adopts it into the shadow roots marimo draws widgets in.
//
// node widgets/build.mjs [--watch] [--outdir DIR]   (DIR: elsewhere, to compare with a build)
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const views = join(here, 'src', 'views');
const staticDir = join(here, '..', '..', 'src', 'mediagen', 'widgets', 'static');
const sheet = readFileSync(join(staticDir, 'mediagen.css'), 'utf-8');
const outdirFlag = process.argv.indexOf('--outdir');
const outdir = outdirFlag >= 0 ? resolve(process.argv[outdirFlag + 1]) : staticDir;

const options = {
  entryPoints: readdirSync(views)
    .filter(name => name.endsWith('.ts'))
    .map(name => join(views, name)),
  outdir,
  bundle: true,
  format: 'esm',
  target: 'es2020',
  minify: false,
  charset: 'utf8',
  legalComments: 'inline',
  logLevel: 'warning',
  define: {
    MEDIAGEN_SHARED_CSS: JSON.stringify(sheet),
    // the same digest Python's mediagen.widgets._assets computes
    MEDIAGEN_SHARED_CSS_HASH: JSON.stringify(
      createHash('sha256').update(sheet, 'utf-8').digest('hex').slice(0, 16)
    )
  }
};

if (process.argv.includes('--watch')) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
}
