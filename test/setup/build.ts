/**
 * Vitest global setup: the tests run what the sources say. Many tests spawn compiled code
 * (`node dist/src/main.js`, the fixtures under `dist/test/fixtures`), so before any test starts
 * this makes `dist/` the compilation of the current sources — once per run, whether the run is
 * `npm test` or `npx vitest run test/x.test.ts`:
 *
 * - It fingerprints the compilation's inputs: the file list tsconfig.json resolves to and the
 *   content of each file, tsconfig.json itself, package-lock.json (the types of dependencies
 *   decide which imports the emitted JavaScript keeps) and the compiler's version.
 * - If the fingerprint equals the one recorded by the last successful build and every output
 *   exists, `dist/` is already that compilation and nothing runs (a hash of ~400 files, tens of
 *   milliseconds). Otherwise `tsc -p tsconfig.json --incremental` runs, outputs whose source is
 *   gone are deleted (a test could otherwise still run a fixture that no longer exists), and the
 *   fingerprint is recorded.
 * - A compile error fails the run with the compiler's own diagnostics, as `npm run build` would.
 *
 * Content, not modification times, so a file restored with an old mtime (`cp -p`, tar, rsync -t)
 * still counts as changed. The fingerprint lives in `dist/`, so deleting `dist/` forces a build.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
/** Where the fingerprint of the last successful build is kept, under the output directory. */
export const FINGERPRINT_FILE = '.sources.sha256';
/** Outside the file list but deciding what tsc emits. */
const ALSO_HASHED = ['tsconfig.json', 'package-lock.json'];

export default function setup(): void {
  const outcome = ensureBuilt(ROOT);
  if (outcome.built) {
    const pruned = outcome.pruned.length > 0 ? `; removed ${outcome.pruned.length} output(s) whose source is gone: ${outcome.pruned.join(', ')}` : '';
    console.log(`[build] dist/ rebuilt from the sources in ${outcome.ms} ms (tsc -p tsconfig.json --incremental)${pruned}`);
  }
}

export interface BuildOutcome {
  /** False when dist/ already was the compilation of the sources. */
  built: boolean;
  /** Outputs deleted because their source is gone (relative to the root). */
  pruned: string[];
  ms: number;
}

/**
 * Builds `<root>/dist` from the sources `<root>/tsconfig.json` names (rootDir ".", outDir
 * "dist") unless it already is their compilation.
 */
export function ensureBuilt(root: string): BuildOutcome {
  const outDir = join(root, 'dist');
  const fingerprintFile = join(outDir, FINGERPRINT_FILE);
  const sources = compiledSources(root);
  const outputs = sources.filter((file) => !file.endsWith('.d.ts')).map((file) => join(outDir, relative(root, file)).replace(/\.ts$/, '.js'));
  const fingerprint = fingerprintOf(root, sources);
  const missing = outputs.filter((file) => !existsSync(file));
  if (missing.length === 0 && existsSync(fingerprintFile) && readFileSync(fingerprintFile, 'utf8') === fingerprint) return { built: false, pruned: [], ms: 0 };

  // An incremental build re-emits only what changed since its build info, so it would not
  // restore an output deleted by hand: without every output present, build from nothing.
  if (missing.length > 0) rmSync(join(outDir, 'tsconfig.tsbuildinfo'), { force: true });
  rmSync(fingerprintFile, { force: true });
  const started = Date.now();
  const tsc = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.json', '--incremental'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  if (tsc.status !== 0) {
    const why = tsc.error?.message ?? (tsc.signal !== null ? `killed by ${tsc.signal}` : `exit ${tsc.status}`);
    throw new Error(`the build before the tests failed (tsc -p tsconfig.json, ${why}):\n${tsc.stdout}${tsc.stderr}`);
  }
  const stillMissing = outputs.filter((file) => !existsSync(file));
  if (stillMissing.length > 0) throw new Error(`tsc succeeded but did not write ${stillMissing.map((f) => relative(root, f)).join(', ')}`);
  const pruned = pruneOrphans(outDir, new Set(outputs)).map((file) => relative(root, file));
  writeFileSync(fingerprintFile, fingerprint);
  return { built: true, pruned, ms: Date.now() - started };
}

/** The files tsconfig.json compiles, declarations included, as tsc resolves them (absolute paths). */
function compiledSources(root: string): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    },
  });
  if (parsed === undefined) throw new Error('tsconfig.json could not be read');
  const unexpected = parsed.fileNames.filter((file) => !file.endsWith('.ts'));
  if (unexpected.length > 0) throw new Error(`test/setup/build.ts maps only .ts sources to outputs; tsconfig.json also compiles ${unexpected.join(', ')}`);
  return [...parsed.fileNames].sort();
}

function fingerprintOf(root: string, sources: string[]): string {
  const hash = createHash('sha256').update(`typescript ${ts.version}\n`);
  for (const file of [...ALSO_HASHED.map((name) => join(root, name)), ...sources]) {
    hash.update(`${relative(root, file)}\n`);
    hash.update(existsSync(file) ? readFileSync(file) : 'absent');
    hash.update('\n');
  }
  return hash.digest('hex');
}

/** Deletes `.js`/`.js.map` files under dist/ that no current source compiles to; returns them. */
function pruneOrphans(outDir: string, outputs: Set<string>): string[] {
  const pruned: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.js') || entry.name.endsWith('.js.map')) {
        if (!outputs.has(path.replace(/\.map$/, ''))) {
          rmSync(path);
          pruned.push(path);
        }
      }
    }
  };
  if (existsSync(outDir)) walk(outDir);
  return pruned;
}
