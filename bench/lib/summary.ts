/**
 * The bench's summary: raw per-round results reduced to medians over rounds with their spread,
 * ratios to the direct path, and the targets judged met or missed. Pure: no I/O.
 */
import type { LoadResult } from './load.js';
import { median, spread } from './stats.js';

export interface LoadRow {
  path: string;
  /** `pinned` (load generator on CPU 0, the path's servers on CPU 1) or `unpinned`. */
  mode: string;
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
  /** Median CPU time of every server process of the path per call, µs. */
  pathCpuUsPerCall: number;
  /** Median CPU time of the load generator per call, µs. */
  clientCpuUsPerCall: number;
}

export interface Target {
  name: string;
  measured: string;
  met: boolean | undefined;
}

/** Rows of every pin mode: `byMode[mode][path][c]` = one result per round. */
export function loadRowsByMode(byMode: Record<string, Record<string, Record<number, LoadResult[]>> | undefined>): LoadRow[] {
  return Object.entries(byMode).flatMap(([mode, rounds]) => (rounds === undefined ? [] : loadRows(rounds, mode)));
}

export function loadRows(rounds: Record<string, Record<number, LoadResult[]>>, mode = 'unpinned', directPath = 'direct'): LoadRow[] {
  const rows: LoadRow[] = [];
  for (const [path, byC] of Object.entries(rounds)) {
    for (const [c, results] of Object.entries(byC)) {
      const rps = results.map((r) => r.rps);
      const p99 = results.map((r) => r.p99);
      const direct = rounds[directPath]?.[Number(c)];
      rows.push({
        path,
        mode,
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
        pathCpuUsPerCall: median(results.map((r) => r.pathCpuUsPerCall ?? Number.NaN)),
        clientCpuUsPerCall: median(results.map((r) => r.clientCpuUsPerCall)),
      });
    }
  }
  return rows;
}

export function findRow(rows: readonly LoadRow[], path: string, connections: number, mode = headlineMode(rows)): LoadRow | undefined {
  return rows.find((r) => r.path === path && r.connections === connections && r.mode === mode);
}

/** Targets are judged pinned when the run has pinned rows (CPU cost, not scheduling luck). */
export function headlineMode(rows: readonly LoadRow[]): string {
  return rows.some((r) => r.mode === 'pinned') ? 'pinned' : 'unpinned';
}

export interface TargetInputs {
  rows: readonly LoadRow[];
  concurrencies: readonly number[];
  /** Median p99 of tools/list through the 20-upstream gateway and straight to one upstream, ms. */
  toolsListP99?: { gateway: number; direct: number };
  idleRss?: number;
  perSessionShared?: number;
  /** Median cold starts (spawn → first tools/list), ms. */
  coldStartMs?: { portcullisStdio: number; mcpProxy: number };
  /** Medians of Ready − slowest upstream ready, per measured configuration, ms. */
  readyAfterUpstream: number[];
}

const fmtRatio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');
const fmtMs = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : 'n/a');
const fmtMs0 = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : 'n/a');
const fmtUs = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} µs` : 'n/a');
const judged = (value: number, ok: (v: number) => boolean): boolean | undefined => (Number.isFinite(value) ? ok(value) : undefined);

/** The targets, each with the figure measured in this run (load targets judged in `headlineMode`). */
export function judgeTargets(input: TargetInputs): Target[] {
  const targets: Target[] = [];
  const mode = headlineMode(input.rows);
  const other = mode === 'pinned' ? 'unpinned' : undefined;
  const ratio = (path: string, c: number, m = mode) => (findRow(input.rows, path, c, m)?.ratioToDirect ?? Number.NaN);
  const loadCs = input.concurrencies.filter((c) => c === 16 || c === 64);
  const cs = loadCs.length > 0 ? loadCs : [Math.max(...input.concurrencies)];
  const beside = (path: string, c: number) => (other === undefined ? '' : ` (${other} ${fmtRatio(ratio(path, c, other))})`);

  for (const c of cs) {
    const http = ratio('portcullis-http', c);
    const pass = ratio('passthrough', c);
    targets.push({
      name: `Portcullis → HTTP ≥ 0.45× direct, ${mode}, c=${c}`,
      measured: `${fmtRatio(http)}${beside('portcullis-http', c)}; byte passthrough ${fmtRatio(pass)}${beside('passthrough', c)}`,
      met: judged(http, (v) => v >= 0.45),
    });
  }
  for (const c of cs) {
    const cpu = findRow(input.rows, 'portcullis-http', c)?.cpuUsPerCall ?? Number.NaN;
    targets.push({ name: `Portcullis → HTTP: gateway CPU ≤ 300 µs per call, ${mode}, c=${c}`, measured: fmtUs(cpu), met: judged(cpu, (v) => v <= 300) });
  }
  for (const rival of ['mcp-proxy', 'supergateway']) {
    const ratios = cs.map((c) => (findRow(input.rows, 'portcullis-stdio', c)?.rps ?? Number.NaN) / (findRow(input.rows, rival, c)?.rps ?? Number.NaN));
    targets.push({
      name: `Portcullis → stdio ≥ 2× ${rival}, ${mode}`,
      measured: cs.map((c, i) => `c=${c}: ${fmtRatio(ratios[i]!)}`).join(', '),
      met: judged(Math.min(...ratios), (v) => v >= 2),
    });
  }
  if (input.coldStartMs !== undefined) {
    const { portcullisStdio, mcpProxy } = input.coldStartMs;
    targets.push({
      name: 'cold start Portcullis → stdio ≤ mcp-proxy (spawn → first tools/list)',
      measured: `${fmtMs0(portcullisStdio)} vs ${fmtMs0(mcpProxy)}`,
      met: Number.isFinite(portcullisStdio) && Number.isFinite(mcpProxy) ? portcullisStdio <= mcpProxy : undefined,
    });
  }

  const c16 = input.concurrencies.includes(16) ? 16 : input.concurrencies[0]!;
  const addedP99 = (findRow(input.rows, 'portcullis-http', c16)?.p99 ?? Number.NaN) - (findRow(input.rows, 'direct', c16)?.p99 ?? Number.NaN);
  targets.push({ name: `added p99 ≤ 2 ms (Portcullis → HTTP vs direct, ${mode}, c=${c16})`, measured: fmtMs(addedP99), met: judged(addedP99, (v) => v <= 2) });

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
