/**
 * The `tools/call` load phase: every path is started once and given one initialized session;
 * then, for each round, each concurrency, each path in turn (path A c=1, path B c=1, …, path A
 * c=16, …) runs a fixed-duration autocannon round, so machine drift hits every path alike.
 * Each path's process RSS is read once it is started and has answered one call (idle), its peak
 * RSS (VmHWM) after the last round, and the CPU time that
 * process spent per call is read around every round (robust to a busy machine, unlike req/s),
 * with the CPU of every server process of the path (the proxy, its children, the echo behind it).
 *
 * Each round runs in every pin mode in turn (`affinity.ts`): pinned (the load generator on CPU 0,
 * the path's servers on CPU 1) and unpinned, so both ratios come from the same run.
 */
import { isSuccessBody, runLoad, type LoadResult } from '../lib/load.js';
import { closeSession, echoCallBody, openSession, requestHeaders, rpc, type McpSession } from '../lib/mcp-session.js';
import { CLOCK_TICKS_PER_SECOND, processTicks } from '../lib/cpu-noise.js';
import { memoryOf } from '../lib/proc.js';
import { applyAffinity, withDescendants, type PinMode } from '../lib/affinity.js';
import { clientEra, startPath, TOOL_NAME, type BenchContext, type PathId, type StartedPath } from '../paths.js';

export interface LoadPlan {
  paths: readonly PathId[];
  concurrencies: readonly number[];
  rounds: number;
  durationS: number;
  warmupS: number;
  /** Pin modes measured in every round, in order. */
  modes: readonly PinMode[];
  /** Called before each round runs (progress output). */
  onRound?(round: number, connections: number, path: PathId, mode: PinMode): void;
}

export type ModeRounds = Record<string, Record<number, LoadResult[]>>;

export interface LoadPhaseResult {
  /** rounds[mode][path][connections] = one result per round. */
  rounds: Partial<Record<PinMode, ModeRounds>>;
  /** Peak RSS of each path's process over the whole phase, bytes. */
  peakRss: Record<string, number>;
  /** RSS of each path's process once started and probed with one call, before any load, bytes. */
  idleRss: Record<string, number>;
}

interface Target {
  started: StartedPath;
  session: McpSession;
}

function loadOptions(target: Target, connections: number, durationS: number) {
  return {
    url: target.started.url,
    headers: requestHeaders(target.session, 'tools/call', { name: TOOL_NAME[target.started.id] }),
    body: echoCallBody(TOOL_NAME[target.started.id], target.session.era),
    connections,
    durationS,
    verify: isSuccessBody,
  };
}

export async function runLoadPhase(ctx: BenchContext, plan: LoadPlan): Promise<LoadPhaseResult> {
  const targets = new Map<PathId, Target>();
  const idleRss: Record<string, number> = {};
  try {
    for (const id of plan.paths) {
      const started = await startPath(id, ctx);
      const session = await openSession(started.url, undefined, clientEra(id));
      const probe = await rpc(session, 'tools/call', { name: TOOL_NAME[id], arguments: { text: 'probe' } });
      if (JSON.stringify(probe).indexOf('probe') < 0) throw new Error(`${id}: echo did not echo`);
      targets.set(id, { started, session });
      idleRss[id] = memoryOf(started.process.pid)?.rss ?? Number.NaN;
    }
    for (const target of targets.values()) {
      if (plan.warmupS > 0) await runLoad(loadOptions(target, 16, plan.warmupS));
    }
    const rounds: LoadPhaseResult['rounds'] = {};
    const allServers = [...targets.values()].flatMap((t) => t.started.serverRoots);
    try {
      for (let round = 1; round <= plan.rounds; round++) {
        for (const mode of plan.modes) {
          for (const connections of plan.concurrencies) {
            for (const [id, target] of targets) {
              plan.onRound?.(round, connections, id, mode);
              applyAffinity(mode, target.started.serverRoots);
              const servers = withDescendants(target.started.serverRoots);
              const pathTicks = () => servers.reduce((sum, pid) => sum + processTicks(pid), 0);
              const ticksBefore = processTicks(target.started.process.pid);
              const pathBefore = pathTicks();
              const result = await runLoad(loadOptions(target, connections, plan.durationS));
              const cpuUs = ((processTicks(target.started.process.pid) - ticksBefore) * 1e6) / CLOCK_TICKS_PER_SECOND;
              const pathUs = ((pathTicks() - pathBefore) * 1e6) / CLOCK_TICKS_PER_SECOND;
              result.cpuUsPerCall = result.ok > 0 ? cpuUs / result.ok : Number.NaN;
              result.pathCpuUsPerCall = result.ok > 0 ? pathUs / result.ok : Number.NaN;
              (((rounds[mode] ??= {})[id] ??= {})[connections] ??= []).push(result);
            }
          }
        }
      }
    } finally {
      applyAffinity('unpinned', allServers);
    }
    const peakRss: Record<string, number> = {};
    for (const [id, target] of targets) peakRss[id] = memoryOf(target.started.process.pid)?.peakRss ?? Number.NaN;
    return { rounds, peakRss, idleRss };
  } finally {
    for (const target of targets.values()) {
      await closeSession(target.session);
      await target.started.process.stop();
    }
  }
}
