/**
 * CPU pinning for the load rounds, with `taskset` (util-linux): the load generator (this process)
 * on CPU 0 and every server process of the path under test (its descendants included) on CPU 1,
 * so a ratio compares CPU cost rather than who won the scheduler; or every process back on all
 * CPUs for the unpinned rounds. Affinity is set on every thread (`-a`) of a running process.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { descendantsOf, processTree } from './proc.js';

export type PinMode = 'pinned' | 'unpinned';

/** True when the machine has two CPUs or more and `taskset` runs. */
export function canPin(): boolean {
  if (cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function setAffinity(pid: number, list: string): void {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', list, String(pid)], { stdio: 'ignore' });
  } catch {
    // The process left between listing and pinning: nothing to pin.
  }
}

/** The given processes and all their descendants. */
export function withDescendants(roots: readonly number[]): number[] {
  const tree = processTree();
  const pids = new Set<number>();
  for (const root of roots) {
    pids.add(root);
    for (const d of descendantsOf(root, tree)) pids.add(d.pid);
  }
  return [...pids];
}

/** Pins (or unpins) the bench process and the servers of one path before its round. */
export function applyAffinity(mode: PinMode, serverRoots: readonly number[]): void {
  const all = `0-${cpus().length - 1}`;
  setAffinity(process.pid, mode === 'pinned' ? '0' : all);
  for (const pid of withDescendants(serverRoots)) setAffinity(pid, mode === 'pinned' ? '1' : all);
}
