/**
 * Turns a finished bench run into the printed tables and the Markdown written beside the JSON in
 * bench/results/. Formatting only: every figure comes from `summary.ts`.
 */
import { PATH_LABELS, type PathId } from '../paths.js';
import { median, spread } from './stats.js';
import type { LoadRow, Target } from './summary.js';
import { renderTable } from './table.js';

export interface ToolsListSummary {
  upstreams: number;
  isolation: string;
  gatewayP50: number;
  gatewayP99: number;
  directP50: number;
  directP99: number;
  readyAfterUpstreamMs?: number;
  idleRss: number;
}

export interface RunReport {
  meta: Record<string, string | number>;
  rows: LoadRow[];
  peakRss: Record<string, number>;
  /** RSS of each path's process, started and idle, bytes. */
  idleRssByPath: Record<string, number>;
  coldStart: Record<string, { toolsListMs: number[]; readyMs: number[]; readyAfterUpstreamMs: number[] }>;
  stdioEchoAloneMs: number[];
  toolsList: ToolsListSummary[];
  idleRss?: number;
  sessionMemory: {
    isolation: string;
    sessions: number;
    idleRss: number;
    rssWithSessions: number;
    perSessionRss: number;
    gcRssBefore: number;
    gcRssWith: number;
    perSession: number;
    perSessionHeap: number;
    perSessionExternal: number;
  }[];
  targets: Target[];
}

const mb = (bytes: number | undefined) => (bytes === undefined || !Number.isFinite(bytes) ? '—' : `${(bytes / 2 ** 20).toFixed(1)} MB`);
const ms = (x: number | undefined, digits = 2) => (x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(digits));
const pct = (x: number) => (Number.isFinite(x) ? `±${((x * 100) / 2).toFixed(0)}%` : '—');
const label = (path: string) => PATH_LABELS[path as PathId] ?? path;

function withSpread(values: number[], digits = 0): string {
  if (values.length === 0) return '—';
  const m = median(values);
  return values.length > 1 ? `${m.toFixed(digits)} (${pct(spread(values))})` : m.toFixed(digits);
}

export function renderReport(report: RunReport, style: 'text' | 'markdown'): string {
  const out: string[] = [];
  const heading = (text: string) => out.push('', style === 'markdown' ? `#### ${text}` : `== ${text} ==`, '');

  heading(
    'tools/call load (medians over rounds; ± is half the max−min range over rounds; pinned = load generator on CPU 0 and every server ' +
      'process of the path on CPU 1, unpinned = all on every CPU; ×direct = req/s over the direct path in the same mode; gateway CPU = ' +
      'CPU time of the proxy process (the echo for direct) per call, path CPU = of every server process of the path; p50/p99 and CPU from ' +
      'the pinned rounds; other CPU = most of the machine used by processes outside the bench in one round)',
  );
  const concurrencies = [...new Set(report.rows.map((r) => r.connections))].sort((a, b) => a - b);
  const paths = [...new Set(report.rows.map((r) => r.path))];
  const modes = [...new Set(report.rows.map((r) => r.mode))];
  const first = modes[0] ?? 'unpinned';
  const loadRows: string[][] = [];
  const ratio = (row: LoadRow | undefined) => (row !== undefined && Number.isFinite(row.ratioToDirect) ? `${row.ratioToDirect.toFixed(2)}×` : '—');
  const us = (x: number | undefined) => (x !== undefined && Number.isFinite(x) ? x.toFixed(0) : '—');
  for (const c of concurrencies) {
    for (const path of paths) {
      const byMode = modes.map((mode) => report.rows.find((r) => r.path === path && r.connections === c && r.mode === mode));
      const row = byMode[0];
      if (row === undefined) continue;
      loadRows.push([
        label(path),
        String(c),
        ...byMode.flatMap((r) => [r === undefined ? '—' : `${r.rps.toFixed(0)} ${pct(r.rpsSpread)}`, ratio(r)]),
        ms(row.p50),
        `${ms(row.p99)} ${pct(row.p99Spread)}`,
        us(row.cpuUsPerCall),
        us(row.pathCpuUsPerCall),
        byMode.reduce((sum, r) => sum + (r?.failed ?? 0), 0) === 0 ? '0' : `${byMode.reduce((sum, r) => sum + (r?.failed ?? 0), 0)} !`,
        `${(Math.max(...byMode.map((r) => r?.foreignCpu ?? 0)) * 100).toFixed(0)}%`,
      ]);
    }
  }
  out.push(
    renderTable(
      [
        { title: 'path' },
        { title: 'c', align: 'right' },
        ...modes.flatMap((mode) => [
          { title: `${mode} req/s`, align: 'right' as const },
          { title: `${mode} ×direct`, align: 'right' as const },
        ]),
        { title: `p50 ms`, align: 'right' },
        { title: `p99 ms`, align: 'right' },
        { title: `gateway CPU µs/call`, align: 'right' },
        { title: `path CPU µs/call`, align: 'right' },
        { title: 'failed', align: 'right' },
        { title: 'other CPU', align: 'right' },
      ],
      loadRows,
      style,
    ),
  );
  if (modes.length > 1) out.push('', `(p50, p99 and CPU columns: ${first} rounds)`);

  const clientCpu = report.rows.map((r) => r.clientCpuUsPerCall).filter(Number.isFinite);
  if (clientCpu.length > 0) {
    out.push('', `load generator (autocannon, in the bench process) CPU per call: median ${median(clientCpu).toFixed(0)} µs, range ${Math.min(...clientCpu).toFixed(0)}–${Math.max(...clientCpu).toFixed(0)} µs`);
  }

  heading('per path: memory and cold start (cold start = spawn → first tools/list answered; median of runs)');
  const everyPath = [...new Set([...paths, ...Object.keys(report.coldStart)])];
  const pathRows = everyPath.map((path) => {
    const cold = report.coldStart[path];
    return [
      label(path),
      mb(report.idleRssByPath[path]),
      mb(report.peakRss[path]),
      cold === undefined ? '—' : withSpread(cold.toolsListMs),
      cold === undefined || cold.readyMs.length === 0 ? '—' : withSpread(cold.readyMs),
      cold === undefined || cold.readyAfterUpstreamMs.length === 0 ? '—' : withSpread(cold.readyAfterUpstreamMs),
    ];
  });
  out.push(
    renderTable(
      [
        { title: 'path' },
        { title: 'idle RSS (proxy process)', align: 'right' },
        { title: 'peak RSS (proxy process)', align: 'right' },
        { title: 'cold start ms', align: 'right' },
        { title: 'spawn → Ready ms', align: 'right' },
        { title: 'Ready − upstream ready ms', align: 'right' },
      ],
      pathRows,
      style,
    ),
  );
  if (report.stdioEchoAloneMs.length > 0) {
    out.push('', `stdio echo alone (spawn → initialize answered): ${withSpread(report.stdioEchoAloneMs)} ms`);
  }

  heading('Portcullis only');
  const extra: string[][] = [];
  if (report.idleRss !== undefined) extra.push(['idle RSS, default config, 1 HTTP upstream', mb(report.idleRss)]);
  for (const list of report.toolsList) {
    const tag = `${list.upstreams} HTTP upstreams, isolation "${list.isolation}"`;
    extra.push([`idle RSS, ${tag}`, mb(list.idleRss)]);
    extra.push([`tools/list via gateway, ${tag}, c=1: p50 / p99`, `${ms(list.gatewayP50, 3)} / ${ms(list.gatewayP99, 3)} ms`]);
    extra.push([`tools/list straight to one upstream, c=1: p50 / p99`, `${ms(list.directP50, 3)} / ${ms(list.directP99, 3)} ms`]);
    extra.push([`tools/list added p99, ${tag}`, `${ms(list.gatewayP99 - list.directP99, 3)} ms`]);
    if (list.readyAfterUpstreamMs !== undefined) extra.push([`Ready − slowest upstream ready, ${tag}`, `${ms(list.readyAfterUpstreamMs, 0)} ms`]);
  }
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  for (const m of report.sessionMemory) {
    const tag = `isolation "${m.isolation}", ${m.sessions} sessions`;
    extra.push([`memory per idle session after full GC, ${tag}`, `${kb(m.perSession)} RSS (${kb(m.perSessionHeap)} JS heap, ${kb(m.perSessionExternal)} external)  (RSS ${mb(m.gcRssBefore)} → ${mb(m.gcRssWith)})`]);
    extra.push([`memory per idle session, raw RSS, ${tag}`, `${kb(m.perSessionRss)}  (RSS ${mb(m.idleRss)} → ${mb(m.rssWithSessions)})`]);
  }
  out.push(renderTable([{ title: 'measure' }, { title: 'value', align: 'right' }], extra, style));

  heading('targets');
  out.push(
    renderTable(
      [{ title: 'target' }, { title: 'measured' }, { title: 'result' }],
      report.targets.map((t) => [t.name, t.measured, t.met === undefined ? 'not measured' : t.met ? 'met' : 'MISSED']),
      style,
    ),
  );

  heading('run');
  out.push(Object.entries(report.meta).map(([k, v]) => `${style === 'markdown' ? '- ' : ''}${k}: ${v}`).join('\n'));
  return out.join('\n');
}
