/** Where the compiled fixture and CLI live, and the check that they were built. */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FIXTURE_JS = `${ROOT}dist/test/fixtures/conformance-server.js`;
export const CLI_JS = `${ROOT}dist/src/main.js`;
export const MODERN_VERSION = '2026-07-28';

/** Fails early, with the fix, when the compiled fixture or CLI is missing. */
export function assertBuilt(): void {
  for (const file of [FIXTURE_JS, CLI_JS]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npx tsc -p tsconfig.json\` first`);
  }
}

/** A fresh random marker for the stdio fixtures of one gateway or one test file. */
export function newMarker(): string {
  return randomUUID();
}
