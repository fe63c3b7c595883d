/**
 * The chart library the admin page draws with — uPlot (MIT; a pinned dependency), its minified
 * browser build and stylesheet — served by the gateway itself from the installed package, never
 * from a CDN: the page works offline, and its Content-Security-Policy admits only what the
 * gateway sends it (by nonce). Read once, on the first request, and kept in memory (≈ 53 KB).
 * The version is in the path, so a browser may keep a copy for as long as that version is served.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface ChartAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

export interface ChartAssets {
  /** Path segments under the admin path: `assets/uplot-<version>.js` and `.css`. */
  readonly script: string;
  readonly stylesheet: string;
  /** The asset at `segment` (one of the two above), or undefined for any other. */
  read(segment: string): Promise<ChartAsset | undefined>;
}

const require = createRequire(import.meta.url);

/**
 * Locates the installed uPlot. Called when the admin routes are mounted, so a broken install (the
 * package missing) stops the start with what to do, as a missing import would, rather than
 * serving a page whose charts never draw.
 */
export function chartAssets(): ChartAssets {
  let root: string;
  let version: string;
  try {
    const manifest = require.resolve('uplot/package.json');
    root = dirname(manifest);
    version = (require(manifest) as { version: string }).version;
  } catch {
    throw new Error('the admin page needs the "uplot" package, a dependency of portcullis, and it is not installed: reinstall portcullis (npm ci)');
  }
  const script = `assets/uplot-${version}.min.js`;
  const stylesheet = `assets/uplot-${version}.min.css`;
  const files = new Map([
    [script, { path: join(root, 'dist', 'uPlot.iife.min.js'), contentType: 'text/javascript; charset=utf-8' }],
    [stylesheet, { path: join(root, 'dist', 'uPlot.min.css'), contentType: 'text/css; charset=utf-8' }],
  ]);
  const loaded = new Map<string, Promise<ChartAsset>>();
  return {
    script,
    stylesheet,
    read(segment) {
      const file = files.get(segment);
      if (file === undefined) return Promise.resolve(undefined);
      let asset = loaded.get(segment);
      if (asset === undefined) {
        asset = readFile(file.path).then((body) => ({ body, contentType: file.contentType }));
        // A failed read is tried again on the next request, not remembered.
        asset.catch(() => loaded.delete(segment));
        loaded.set(segment, asset);
      }
      return asset;
    },
  };
}
