/**
 * The npm proxies the bench compares with live in bench/rivals (their own package.json and lock),
 * installed on the first run that needs them. They stay out of the project's dependencies: one of
 * mcp-proxy's dependencies declares Node >= 22, so listing it there made every `npm ci` on Node 20
 * warn EBADENGINE for a package only the bench uses.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const RIVALS_DIR = join(ROOT, 'bench/rivals');

export type RivalPackage = 'mcp-proxy' | 'supergateway';

/** Path of a file inside an installed rival package. */
export function rivalFile(pkg: RivalPackage, file: string): string {
  return join(RIVALS_DIR, 'node_modules', pkg, file);
}

/** The installed version of a rival, or 'not installed'. */
export function rivalVersion(pkg: RivalPackage): string {
  try {
    return (JSON.parse(readFileSync(rivalFile(pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

/**
 * Installs the pinned rivals (`npm ci` in bench/rivals) unless every one is already there.
 * Throws with the command to run by hand when the install fails.
 */
export function ensureRivals(needed: readonly RivalPackage[]): void {
  if (needed.every((pkg) => existsSync(rivalFile(pkg, 'package.json')))) return;
  try {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: RIVALS_DIR, stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 });
  } catch (error) {
    throw new Error(`could not install the bench's rival proxies (${(error as Error).message}); run \`npm ci --prefix bench/rivals\` and retry`);
  }
}
