/**
 * The gateway's version, read once from its package.json: what `--version` prints, the start
 * banner shows, the handshake's `serverInfo.version` says, traces carry and the admin page shows.
 * The manifest is found by walking up from this module (src/composition/ under the test runner,
 * dist/src/composition/ once built, in the clone, the npm tarball and the image alike), taking the
 * first package.json named `portcullis`; at most a few levels, so a moved file fails loudly rather
 * than reading another package's version.
 */
import { readFileSync } from 'node:fs';

const MAX_LEVELS = 4;

function readPackageVersion(): string {
  for (let level = 1; level <= MAX_LEVELS; level++) {
    const url = new URL(`${'../'.repeat(level)}package.json`, import.meta.url);
    let text: string;
    try {
      text = readFileSync(url, 'utf8');
    } catch {
      continue;
    }
    const manifest = JSON.parse(text) as { name?: unknown; version?: unknown };
    if (manifest.name === 'portcullis' && typeof manifest.version === 'string') return manifest.version;
  }
  throw new Error(`portcullis: no package.json of its own within ${MAX_LEVELS} levels of ${import.meta.url}`);
}

/** The version of this package (package.json `version`). */
export const GATEWAY_VERSION: string = readPackageVersion();
