/**
 * How much of the machine's CPU went to processes the bench did not start, over an interval:
 * a benchmark on a shared 2-core machine is only as good as its quietest round, so each round
 * records this share and the report prints it. From /proc/stat (all CPUs) minus the CPU time of
 * the bench itself, every process it started and their descendants (/proc/PID/stat).
 */
import { readFileSync } from 'node:fs';
import { descendantsOf, processTree } from './proc.js';

export interface CpuSnapshot {
  total: number;
  busy: number;
  ours: number;
}

/** Kernel clock ticks per second (USER_HZ): 100 on every mainstream Linux build. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system, in clock ticks) a process has used so far; 0 when it is gone. */
export function processTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime(14) and stime(15) overall → indexes 11 and 12 after the name.
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** A snapshot of machine-wide CPU ticks and of those spent by `roots` and their descendants. */
export function cpuSnapshot(roots: readonly number[]): CpuSnapshot {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  const pids = new Set<number>();
  const tree = processTree();
  for (const root of roots) {
    pids.add(root);
    for (const d of descendantsOf(root, tree)) pids.add(d.pid);
  }
  let ours = 0;
  for (const pid of pids) ours += processTicks(pid);
  return { total: busy + idle! + iowait!, busy, ours };
}

/** Share (0–1) of all CPU capacity used by other processes between two snapshots. */
export function foreignShare(before: CpuSnapshot, after: CpuSnapshot): number {
  const total = after.total - before.total;
  if (total <= 0) return 0;
  return Math.max(0, (after.busy - before.busy - (after.ours - before.ours)) / total);
}

/** Waits (bounded) until other processes use less than `threshold` of the CPU over one second. */
export async function waitForQuiet(roots: () => number[], threshold: number, maxWaitMs: number): Promise<number> {
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    const before = cpuSnapshot(roots());
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const share = foreignShare(before, cpuSnapshot(roots()));
    if (share < threshold || Date.now() >= deadline) return share;
  }
}
