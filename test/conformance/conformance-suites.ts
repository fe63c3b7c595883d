/**
 * Which official MCP conformance suites the runner executes, and where their code and the Node 20
 * loader live.
 *
 * Both lines are installed side by side (`@modelcontextprotocol/conformance` 0.1.x and the
 * `conformance-0.2` npm alias); both import `fs.globSync`, which Node 20 lacks, so on Node < 22
 * they are started with `--import test/conformance/node20/register.mjs` (see that folder).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SuiteSpec {
  /** Short id used in the summary table and in result folder names. */
  id: string;
  /** npm package (or alias) holding the suite. */
  packageName: string;
  /** `--spec-version`; undefined runs the suite's default. */
  specVersion?: string;
  /** `--suite`; undefined runs the suite's default (active). */
  suite?: 'active' | 'all';
  /** `--scenario`: one scenario instead of a suite. */
  scenario?: string;
  /** Expected-failures baseline beside this file, used only when it exists. */
  expectedFailuresFile: string;
}

export const SUITES: readonly SuiteSpec[] = [
  { id: '0.1.16', packageName: '@modelcontextprotocol/conformance', expectedFailuresFile: 'expected-failures-0.1.yml' },
  {
    id: '0.2/2025-11-25',
    packageName: 'conformance-0.2',
    specVersion: '2025-11-25',
    suite: 'active',
    expectedFailuresFile: 'expected-failures-0.2-2025-11-25.yml',
  },
  {
    id: '0.2/2026-07-28',
    packageName: 'conformance-0.2',
    specVersion: '2026-07-28',
    suite: 'active',
    expectedFailuresFile: 'expected-failures-0.2-2026-07-28.yml',
  },
  {
    // Not in the active suite, but issue 4 requires it: priming event, retry field, and a stream
    // the server closes mid-call (the gateway runs with eventStore.pollAfterMs) resumed losslessly.
    id: '0.2/sse-polling',
    packageName: 'conformance-0.2',
    specVersion: '2025-11-25',
    scenario: 'server-sse-polling',
    expectedFailuresFile: 'expected-failures-0.2-2025-11-25.yml',
  },
];

/** The repository root: the nearest ancestor of this file holding the `portcullis` package.json. */
export function findRepoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (let depth = 0; depth < 8; depth += 1) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && readPackageName(manifest) === 'portcullis') return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error('could not find the portcullis repository root above the conformance runner');
}

function readPackageName(manifest: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name;
  } catch {
    return undefined;
  }
}

/** The CLI entry of an installed suite package, found through normal module resolution. */
export function suiteEntry(packageName: string): string {
  const require = createRequire(import.meta.url);
  let manifestPath: string;
  try {
    manifestPath = require.resolve(`${packageName}/package.json`);
  } catch {
    throw new Error(`conformance package ${packageName} is not installed (run npm ci)`);
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.conformance;
  if (bin === undefined) throw new Error(`conformance package ${packageName} declares no conformance binary`);
  return resolve(dirname(manifestPath), bin);
}

/**
 * `--import` arguments needed to run the suites on this Node version: the repository's own
 * fs.globSync loader (`test/conformance/node20/`) on Node < 22, nothing on newer Nodes.
 */
export function loaderArgs(repoRoot: string, nodeVersion: string = process.versions.node): string[] {
  const major = Number(nodeVersion.split('.')[0]);
  if (major >= 22) return [];
  const loader = resolve(repoRoot, 'test', 'conformance', 'node20', 'register.mjs');
  if (!existsSync(loader)) throw new Error(`Node ${nodeVersion} needs the conformance loader at ${loader}; is this a complete checkout?`);
  return ['--import', loader];
}
