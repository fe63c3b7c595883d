/**
 * The bench's summary: raw per-round results reduced to medians over rounds with their spread,
 * ratios to the direct path, and the targets judged met or missed. Pure: no I/O.
 */
import type { LoadResult } from './load.js';
import { median, spread } from './stats.js';

export interface LoadRow {
  path: string;
  connections: number;
  rps: number;
  /** (max − min) / median of requests/s over rounds. */
  rpsSpread: number;
  p50: number;
  p99: number;
  /** (max − min) / median of p99 over rounds. */
  p99Spread: number;
  /** rps / rps of the direct path at the same concurrency. */
  ratioToDirect: number;
  failed: number;
  rounds: number;
  /** Largest share of the CPU other processes took during one of these rounds (0–1). */
  foreignCpu: number;
  /** Median CPU time of the measured process per call, µs (the proxy; the echo server for direct). */
  cpuUsPerCall: number;
  /** Median CPU time of the load generator per call, µs. */
  clientCpuUsPerCall: number;
}

export interface Target {
  name: string;
  measured: string;
  met: boolean | undefined;
}

export function loadRows(rounds: Record<string, Record<number, LoadResult[]>>, directPath = 'direct'): LoadRow[] {
  const rows: LoadRow[] = [];
  for (const [path, byC] of Object.entries(rounds)) {
    for (const [c, results] of Object.entries(byC)) {
      const rps = results.map((r) => r.rps);
      const p99 = results.map((r) => r.p99);
      const direct = rounds[directPath]?.[Number(c)];
      rows.push({
        path,
        connections: Number(c),
        rps: median(rps),
        rpsSpread: spread(rps),
        p50: median(results.map((r) => r.p50)),
        p99: median(p99),
        p99Spread: spread(p99),
        ratioToDirect: direct === undefined ? Number.NaN : median(rps) / median(direct.map((r) => r.rps)),
        failed: results.reduce((sum, r) => sum + r.failed, 0),
        rounds: results.length,
        foreignCpu: Math.max(0, ...results.map((r) => r.foreignCpu)),
        cpuUsPerCall: median(results.map((r) => r.cpuUsPerCall ?? Number.NaN)),
        clientCpuUsPerCall: median(results.map((r) => r.clientCpuUsPerCall)),
      });
    }
  }
  return rows;
}

export function findRow(rows: readonly LoadRow[], path: string, connections: number): LoadRow | undefined {
  return rows.find((r) => r.path === path && r.connections === connections);
}

export interface TargetInputs {
  rows: readonly LoadRow[];
  concurrencies: readonly number[];
  /** Median p99 of tools/list through the 20-upstream gateway and straight to one upstream, ms. */
  toolsListP99?: { gateway: number; direct: number };
  idleRss?: number;
  perSessionShared?: number;
  /** Medians of Ready − slowest upstream ready, per measured configuration, ms. */
  readyAfterUpstream: number[];
}

const fmtRatio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');
const fmtMs = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : 'n/a');
const judged = (value: number, ok: (v: number) => boolean): boolean | undefined => (Number.isFinite(value) ? ok(value) : undefined);

/** The targets, each with the figure measured in this run. */
export function judgeTargets(input: TargetInputs): Target[] {
  const targets: Target[] = [];
  const rps = (path: string, c: number) => findRow(input.rows, path, c)?.rps ?? Number.NaN;
  const c64 = input.concurrencies.includes(64) ? 64 : Math.max(...input.concurrencies);
  const c16 = input.concurrencies.includes(16) ? 16 : input.concurrencies[0]!;

  const viaHttp = rps('portcullis-http', c64) / rps('direct', c64);
  targets.push({ name: `tools/call Portcullis → HTTP ≥ 0.60× direct (c=${c64})`, measured: fmtRatio(viaHttp), met: judged(viaHttp, (v) => v >= 0.6) });

  for (const rival of ['mcp-proxy', 'supergateway']) {
    const ratios = input.concurrencies.map((c) => rps('portcullis-stdio', c) / rps(rival, c));
    const worst = Math.min(...ratios);
    targets.push({
      name: `stdio path ≥ 3× ${rival} (every c)`,
      measured: input.concurrencies.map((c, i) => `c=${c}: ${fmtRatio(ratios[i]!)}`).join(', '),
      met: judged(worst, (v) => v >= 3),
    });
  }

  const addedP99 = (findRow(input.rows, 'portcullis-http', c16)?.p99 ?? Number.NaN) - (findRow(input.rows, 'direct', c16)?.p99 ?? Number.NaN);
  targets.push({ name: `added p99 ≤ 2 ms (Portcullis → HTTP vs direct, c=${c16})`, measured: fmtMs(addedP99), met: judged(addedP99, (v) => v <= 2) });

  if (input.toolsListP99 !== undefined) {
    const added = input.toolsListP99.gateway - input.toolsListP99.direct;
    targets.push({ name: 'tools/list across 20 upstreams: ≤ 1 ms added p99', measured: fmtMs(added), met: judged(added, (v) => v <= 1) });
  }
  if (input.idleRss !== undefined) {
    targets.push({ name: 'idle gateway RSS ≤ 60 MB', measured: `${(input.idleRss / 2 ** 20).toFixed(1)} MB`, met: judged(input.idleRss, (v) => v <= 60 * 2 ** 20) });
  }
  if (input.perSessionShared !== undefined) {
    targets.push({
      name: '≤ 30 KB per idle session (beyond its upstream connection)',
      measured: `${(input.perSessionShared / 1024).toFixed(1)} KB`,
      met: judged(input.perSessionShared, (v) => v <= 30 * 1024),
    });
  }
  if (input.readyAfterUpstream.length > 0) {
    const worst = Math.max(...input.readyAfterUpstream);
    targets.push({ name: 'Ready ≤ 100 ms after the slowest required upstream', measured: fmtMs(worst), met: judged(worst, (v) => v <= 100) });
  }
  return targets;
}
