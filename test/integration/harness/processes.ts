/**
 * Process bookkeeping from /proc: who descends from whom, which processes run the fixture, and
 * which carry a test's marker in their environment (so an orphan re-parented to init still
 * counts as leaked). Zombies are dead and are not counted. Processes are ended by pid only.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { within } from './wait.js';

/** Names a stdio fixture's environment carries, so a leaked one is found even once orphaned. */
export const MARKER_VAR = 'PORTCULLIS_IT_MARKER';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  cmdline: string[];
}

/** Live (non-zombie) processes from /proc, with parent pid and argv. */
export function listProcesses(): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 2 (comm) may hold spaces and parentheses: parse after the last ')'.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || state === 'X') continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter((part) => part !== '');
      out.push({ pid: Number(entry), ppid: Number(ppid), cmdline });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** Every live descendant of `pid` (children, grandchildren, …). */
export function descendantsOf(pid: number): ProcessInfo[] {
  const all = listProcesses();
  const found: ProcessInfo[] = [];
  const frontier = [pid];
  while (frontier.length > 0) {
    const parent = frontier.pop()!;
    for (const proc of all) {
      if (proc.ppid === parent) {
        found.push(proc);
        frontier.push(proc.pid);
      }
    }
  }
  return found;
}

/** Whether a process runs the conformance fixture. */
export function isFixture(proc: ProcessInfo): boolean {
  return proc.cmdline.some((part) => part.endsWith('conformance-server.js'));
}

/** Pids of fixture processes below `pid` (default: this test process). */
export function fixtureDescendants(pid = process.pid): number[] {
  return descendantsOf(pid).filter(isFixture).map((proc) => proc.pid);
}

/** Pids of every live process, anywhere (orphans included), whose environment carries `marker`. */
export function processesWithMarker(marker: string): number[] {
  const needle = `${MARKER_VAR}=${marker}`;
  return listProcesses()
    .filter((proc) => {
      try {
        return readFileSync(`/proc/${proc.pid}/environ`, 'utf8').split('\0').includes(needle);
      } catch {
        return false;
      }
    })
    .map((proc) => proc.pid);
}

/** Whether a pid still names a live (non-zombie) process. */
export function isAlive(pid: number): boolean {
  return listProcesses().some((proc) => proc.pid === pid);
}

/** Resolves with the exit status; after `timeoutMs` SIGKILLs the child by pid and rejects. */
export function waitForExit(child: ChildProcess, timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return within(exited, timeoutMs, `exit of process ${child.pid}`).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
}

/** SIGKILLs each pid that is still alive (cleanup of anything a failed test left behind). */
export function killPids(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
