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
  /** RSS of each path's process, started and idle (load phase), bytes. */
  idleRssByPath?: Readonly<Record<string, number>>;
  /** JS heap retained per idle 2025 session after full GCs, isolation "shared", bytes. */
  perSessionHeap?: number;
  /** Median cold starts (spawn → first tools/list), ms. */
  coldStartMs?: { portcullisStdio: number; mcpProxy: number };
  /** Medians of Ready − slowest upstream ready, per measured configuration, ms. */
  readyAfterUpstream: number[];
}

const fmtRatio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');
const fmtMs = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : 'n/a');
const fmtMs0 = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : 'n/a');
const fmtMb = (x: number) => (Number.isFinite(x) ? `${(x / 2 ** 20).toFixed(1)} MB` : 'n/a');
const fmtUs = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} µs` : 'n/a');
const judged = (value: number, ok: (v: number) => boolean): boolean | undefined => (Number.isFinite(value) ? ok(value) : undefined);

/**
 * The targets of issue 22 (the relay core), each a ratio to something measured in the same run,
 * with the figure measured (load targets judged in `headlineMode`, the other mode's ratio beside).
 * "Own CPU" of a path is its whole path's CPU per call minus the direct server's: what the hop
 * itself adds (for the stdio path the direct HTTP echo stands in for the stdio echo's own cost).
 */
export function judgeTargets(input: TargetInputs): Target[] {
  const targets: Target[] = [];
  const mode = headlineMode(input.rows);
  const other = mode === 'pinned' ? 'unpinned' : undefined;
  const row = (path: string, c: number, m = mode) => findRow(input.rows, path, c, m);
  const rps = (path: string, c: number, m = mode) => row(path, c, m)?.rps ?? Number.NaN;
  const ownCpu = (path: string, c: number) => (row(path, c)?.pathCpuUsPerCall ?? Number.NaN) - (row('direct', c)?.pathCpuUsPerCall ?? Number.NaN);
  const loadCs = input.concurrencies.filter((c) => c === 16 || c === 64);
  const cs = loadCs.length > 0 ? loadCs : [Math.max(...input.concurrencies)];
  const beside = (value: number) => (other === undefined ? '' : ` (${other} ${fmtRatio(value)})`);

  for (const c of cs) {
    const toPass = rps('portcullis-http', c) / rps('passthrough', c);
    const relay = rps('mcp-relay', c) / rps('passthrough', c);
    targets.push({
      name: `Portcullis → HTTP throughput ≥ 0.9× the byte passthrough's, ${mode}, c=${c}`,
      measured: `${fmtRatio(toPass)}${beside(rps('portcullis-http', c, other) / rps('passthrough', c, other))}; minimal MCP relay ${fmtRatio(relay)}`,
      met: judged(toPass, (v) => v >= 0.9),
    });
  }
  for (const [path, label] of [
    ['portcullis-http', 'HTTP'],
    ['portcullis-stdio', 'stdio'],
  ] as const) {
    for (const c of cs) {
      const own = ownCpu(path, c);
      const floor = ownCpu('passthrough', c);
      const ratio = own / floor;
      targets.push({
        name: `Portcullis → ${label}: own CPU per call ≤ 1.5× the byte passthrough's, ${mode}, c=${c}`,
        measured: `${fmtRatio(ratio)} (${fmtUs(own)} vs ${fmtUs(floor)}; minimal MCP relay ${fmtUs(ownCpu('mcp-relay', c))})`,
        met: judged(ratio, (v) => v <= 1.5),
      });
    }
  }
  for (const rival of ['mcp-proxy', 'supergateway']) {
    const ratios = cs.map((c) => rps('portcullis-stdio', c) / rps(rival, c));
    targets.push({
      name: `Portcullis → stdio ≥ 2.5× ${rival}, ${mode}`,
      measured: cs.map((c, i) => `c=${c}: ${fmtRatio(ratios[i]!)}`).join(', '),
      met: judged(Math.min(...ratios), (v) => v >= 2.5),
    });
  }
  const cTail = cs.includes(64) ? 64 : cs[cs.length - 1]!;
  for (const path of ['portcullis-http', 'portcullis-stdio']) {
    const ratio = (row(path, cTail)?.p99 ?? Number.NaN) / (row('direct', cTail)?.p99 ?? Number.NaN);
    targets.push({
      name: `${path === 'portcullis-http' ? 'Portcullis → HTTP' : 'Portcullis → stdio'}: p99 ≤ 3× direct's, ${mode}, c=${cTail}`,
      measured: `${fmtRatio(ratio)} (${fmtMs(row(path, cTail)?.p99 ?? Number.NaN)} vs ${fmtMs(row('direct', cTail)?.p99 ?? Number.NaN)})`,
      met: judged(ratio, (v) => v <= 3),
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
  if (input.idleRssByPath !== undefined) {
    const pass = input.idleRssByPath.passthrough ?? Number.NaN;
    for (const path of ['portcullis-http', 'portcullis-stdio']) {
      const own = input.idleRssByPath[path] ?? Number.NaN;
      targets.push({
        name: `idle RSS ${path === 'portcullis-http' ? 'Portcullis → HTTP' : 'Portcullis → stdio'} ≤ 1.8× the byte passthrough's`,
        measured: `${fmtRatio(own / pass)} (${fmtMb(own)} vs ${fmtMb(pass)})`,
        met: judged(own / pass, (v) => v <= 1.8),
      });
    }
  }

  if (input.toolsListP99 !== undefined) {
    const added = input.toolsListP99.gateway - input.toolsListP99.direct;
    targets.push({ name: 'tools/list across 20 upstreams: ≤ 1 ms added p99', measured: fmtMs(added), met: judged(added, (v) => v <= 1) });
  }
  if (input.perSessionHeap !== undefined) {
    targets.push({
      name: '≤ 16 KB JS heap per idle 2025 session (isolation "shared": the session alone)',
      measured: `${(input.perSessionHeap / 1024).toFixed(1)} KB`,
      met: judged(input.perSessionHeap, (v) => v <= 16 * 1024),
    });
  }
  if (input.readyAfterUpstream.length > 0) {
    const worst = Math.max(...input.readyAfterUpstream);
    targets.push({ name: 'Ready ≤ 100 ms after the slowest required upstream', measured: fmtMs(worst), met: judged(worst, (v) => v <= 100) });
  }
  return targets;
}
