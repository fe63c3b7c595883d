/**
 * Runs one conformance suite against one server URL in a child process, with a deadline, and
 * reads its totals. The suite's exit code is the verdict: it is non-zero exactly when a scenario
 * failed that the expected-failures baseline does not list.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SuiteSpec } from './conformance-suites.js';

export interface SuiteRunOptions {
  suite: SuiteSpec;
  /** Target label for the table and the result folder. */
  target: string;
  url: string;
  /** Absolute path of the suite's CLI entry. */
  entry: string;
  /** `--import` arguments for Node (the Node 20 loader) — possibly empty. */
  nodeArgs: readonly string[];
  /** Folder for this run's scenario results and `output.log`. */
  outputDir: string;
  /** Folder holding the expected-failures YAML files. */
  baselineDir: string;
  /** Whole-suite deadline in ms. */
  timeoutMs: number;
  /** Mirror the suite's output to this process's stdout. */
  verbose: boolean;
  /** Called with the child as soon as it exists, so the caller can kill it on shutdown. */
  onSpawn: (child: ChildProcess) => void;
}

export interface SuiteRunResult {
  suite: string;
  target: string;
  passed: number | undefined;
  failed: number | undefined;
  /** True when the suite exited 0 (no failure outside the baseline). */
  ok: boolean;
  /** Why the run is not ok, when it is not. */
  note?: string;
  baselineUsed: boolean;
}

/** Reads `Total: N passed, M failed` from a suite's output (the last occurrence wins). */
export function parseTotals(output: string): { passed: number; failed: number } | undefined {
  const matches = [...output.matchAll(/Total:\s*(\d+)\s+passed,\s*(\d+)\s+failed/g)];
  const last = matches.at(-1);
  if (last !== undefined) return { passed: Number(last[1]), failed: Number(last[2]) };
  // A single `--scenario` run reports its checks instead (`Passed: 3/3, 0 failed`): one scenario.
  const single = [...output.matchAll(/Passed:\s*\d+\/\d+,\s*(\d+)\s+failed/g)].at(-1);
  if (single === undefined) return undefined;
  return Number(single[1]) === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 };
}

export async function runSuite(options: SuiteRunOptions): Promise<SuiteRunResult> {
  const { suite } = options;
  mkdirSync(options.outputDir, { recursive: true });
  const baseline = join(options.baselineDir, suite.expectedFailuresFile);
  const baselineUsed = existsSync(baseline);
  const args = [
    ...options.nodeArgs,
    options.entry,
    'server',
    '--url',
    options.url,
    ...(suite.specVersion === undefined ? [] : ['--spec-version', suite.specVersion]),
    ...(suite.suite === undefined ? [] : ['--suite', suite.suite]),
    ...(suite.scenario === undefined ? [] : ['--scenario', suite.scenario]),
    ...(baselineUsed ? ['--expected-failures', baseline] : []),
    '-o',
    options.outputDir,
  ];

  const log = createWriteStream(join(options.outputDir, 'output.log'));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], shell: false });
  options.onSpawn(child);

  let output = '';
  const collect = (chunk: Buffer): void => {
    log.write(chunk);
    if (options.verbose) process.stdout.write(chunk);
    output += chunk.toString('utf8');
    if (output.length > 4_000_000) output = output.slice(-1_000_000); // totals are at the end
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs);
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(null));
    child.once('close', (exitCode) => resolve(exitCode));
  });
  clearTimeout(timer);
  await new Promise<void>((resolve) => log.end(() => resolve()));

  const totals = parseTotals(output);
  const ok = code === 0 && !timedOut && totals !== undefined;
  const note = timedOut
    ? `timed out after ${Math.round(options.timeoutMs / 1000)} s`
    : totals === undefined
      ? `no summary (exit code ${String(code)}); see output.log`
      : ok
        ? undefined
        : 'failures outside the expected-failures baseline';
  return { suite: suite.id, target: options.target, passed: totals?.passed, failed: totals?.failed, ok, note, baselineUsed };
}
