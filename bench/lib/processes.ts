/**
 * Every process the bench starts goes through `spawnTracked`, and every one is stopped by pid:
 * SIGTERM, a bounded wait, then SIGKILL — for the process and for each descendant it spawned
 * (identified by pid and start time, so a reused pid is never hit). `killAllNow` is the
 * synchronous last resort for `exit`, SIGINT and crashes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { descendantsOf, identify, stillRunning, type ProcessId } from './proc.js';

export interface SpawnOptions {
  /** Directory for this process's log (stderr, and stdout unless it is read). */
  logDir: string;
  /** Read stdout line by line (for a ready line); otherwise it goes to the log file. */
  readStdout?: boolean;
  /** Give the process a stdin pipe (a stdio MCP server measured directly). */
  stdinPipe?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface TrackedProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** `performance.now()` just before spawn. */
  readonly spawnedAt: number;
  /** `Date.now()` just before spawn (to compare with the process's own log timestamps). */
  readonly spawnedEpoch: number;
  readonly logFile: string;
  readonly exited: boolean;
  /** Resolves with the first stdout line matching `pattern` and when (performance.now()) it arrived. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<{ line: string; at: number; epoch: number }>;
  /** The last `bytes` of the log file, for diagnostics. */
  logTail(bytes?: number): string;
  stop(): Promise<void>;
}

const live = new Set<TrackedProcess>();
const TERM_GRACE_MS = 3_000;

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function signal(id: ProcessId, sig: NodeJS.Signals): void {
  if (!stillRunning(id)) return;
  try {
    process.kill(id.pid, sig);
  } catch {
    // Already gone.
  }
}

async function reapDescendants(ids: readonly ProcessId[]): Promise<void> {
  for (const id of ids) signal(id, 'SIGTERM');
  const deadline = Date.now() + 1_000;
  while (ids.some(stillRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  for (const id of ids) signal(id, 'SIGKILL');
}

/** Spawns `node <args>` (argv only, no shell) and tracks it until it is stopped. */
export function spawnTracked(name: string, args: readonly string[], options: SpawnOptions): TrackedProcess {
  const logFile = join(options.logDir, `${name}.log`);
  const logFd = openSync(logFile, 'a');
  const spawnedAt = performance.now();
  const spawnedEpoch = Date.now();
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...args], {
      stdio: [options.stdinPipe ? 'pipe' : 'ignore', options.readStdout ? 'pipe' : logFd, logFd],
      env: options.env ?? process.env,
      shell: false,
    });
  } finally {
    closeSync(logFd);
  }
  if (child.pid === undefined) throw new Error(`${name}: spawn failed`);
  const pid = child.pid;
  const rootId = identify(pid);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  child.once('error', () => {
    exited = true;
  });

  const lineWaiters = new Set<(line: string) => void>();
  if (options.readStdout && child.stdout !== null) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      for (const waiter of lineWaiters) waiter(line);
    });
  }

  let stopping: Promise<void> | undefined;
  const tracked: TrackedProcess = {
    name,
    pid,
    child,
    spawnedAt,
    spawnedEpoch,
    logFile,
    get exited() {
      return exited;
    },
    waitForLine(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const onLine = (line: string) => {
          if (!pattern.test(line)) return;
          done();
          resolve({ line, at: performance.now(), epoch: Date.now() });
        };
        const onExit = () => {
          done();
          reject(new Error(`${name} exited before it was ready; log tail:\n${tracked.logTail()}`));
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${name} not ready within ${timeoutMs} ms; log tail:\n${tracked.logTail()}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          lineWaiters.delete(onLine);
          child.off('exit', onExit);
        };
        lineWaiters.add(onLine);
        child.once('exit', onExit);
      });
    },
    logTail(bytes = 2_000) {
      try {
        const text = readFileSync(logFile, 'utf8');
        return text.slice(-bytes);
      } catch {
        return '';
      }
    },
    stop() {
      stopping ??= (async () => {
        const descendants = exited ? [] : descendantsOf(pid);
        if (!exited && rootId !== undefined) {
          signal(rootId, 'SIGTERM');
          if (!(await waitForExit(child, TERM_GRACE_MS))) signal(rootId, 'SIGKILL');
          await waitForExit(child, TERM_GRACE_MS);
        }
        await reapDescendants(descendants);
        live.delete(tracked);
      })();
      return stopping;
    },
  };
  live.add(tracked);
  return tracked;
}

/** The bench process and every process it started (for CPU accounting). */
export function ownPids(): number[] {
  return [process.pid, ...[...live].filter((p) => !p.exited).map((p) => p.pid)];
}

/** Stops every tracked process (in parallel), gracefully first. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop()));
}

/** Synchronous SIGKILL of every tracked process and its descendants, by pid (exit/crash path). */
export function killAllNow(): void {
  for (const tracked of live) {
    if (tracked.exited) continue;
    const descendants = descendantsOf(tracked.pid);
    const root = identify(tracked.pid);
    if (root !== undefined) signal(root, 'SIGKILL');
    for (const id of descendants) signal(id, 'SIGKILL');
  }
  live.clear();
}

/**
 * Runs a bench script's `main`: every tracked process is stopped (gracefully, then by SIGKILL on
 * exit) however it ends — returning, throwing, SIGINT or SIGTERM. Sets exit code 1 on a throw.
 */
export function runScript(main: () => Promise<void>): void {
  process.on('exit', killAllNow);
  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    process.once(name, () => {
      killAllNow();
      process.exit(130);
    });
  }
  main()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(() => stopAll());
}
