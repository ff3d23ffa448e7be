import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { consoleCss } from './console-css.ts';
import { takingsChartScript } from './takings-chart-script.ts';

/** A file the console serves, held in memory (a few tens of kB). */
export interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

const require = createRequire(import.meta.url);

/** uPlot's own build, from the installed package (packed with the app, never a CDN). */
function fromPackage(path: string): Buffer {
  return readFileSync(require.resolve(path));
}

function asset(type: string, body: Buffer | string): Asset {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return {
    type,
    body: bytes,
    etag: `"${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}"`,
  };
}

export interface Assets {
  files: ReadonlyMap<string, Asset>;
  /** Changes whenever a file does: asset URLs carry it, so browsers may cache them for good. */
  version: string;
}

let loaded: Assets | undefined;

export function consoleAssets(): Assets {
  if (loaded) return loaded;
  const files = new Map<string, Asset>([
    ['console.css', asset('text/css; charset=utf-8', consoleCss)],
    ['takings-chart.js', asset('text/javascript; charset=utf-8', takingsChartScript)],
    [
      'uplot.js',
      asset('text/javascript; charset=utf-8', fromPackage('uplot/dist/uPlot.iife.min.js')),
    ],
    ['uplot.css', asset('text/css; charset=utf-8', fromPackage('uplot/dist/uPlot.min.css'))],
  ]);
  const version = createHash('sha256')
    .update([...files.values()].map((file) => file.etag).join(''))
    .digest('hex')
    .slice(0, 10);
  loaded = { files, version };
  return loaded;
}
