/**
 * The tool-search benchmark: recall@1 and recall@5 of the query set on the ~5,000-tool
 * catalogue (whole set, tuning half, held-out half), search latency, index build time and the
 * heap the index retains, each judged against its target. Method: docs/performance.md, "Search".
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildToolIndex } from '../../src/catalogue/search/tool-index.js';
import { DEFAULT_RANKING } from '../../src/catalogue/search/ranking.js';
import { cpuSnapshot, foreignShare } from '../lib/cpu-noise.js';
import { percentileSorted, median } from '../lib/stats.js';
import type { Target } from '../lib/summary.js';
import { renderTable } from '../lib/table.js';
import { loadCatalogue, type BenchCatalogue } from './catalogue.js';
import { checkQueries, expectedNames, rankQueries, recallOf, type QueryOutcome, type Recall } from './evaluate.js';
import type { BuildMeasurement } from './measure-build.js';
import { QUERIES } from './queries.js';

const MEASURE_BUILD = fileURLToPath(new URL('./measure-build.js', import.meta.url));

export const SEARCH_TARGETS = { recallAt5: 0.9, recallAt1: 0.7, p99Ms: 2, buildMs: 300, heapMB: 30 } as const;

export interface SearchBenchOptions {
  /** Timed passes over the whole query set. */
  rounds: number;
  /** Builds timed in the child process. */
  builds: number;
}

export interface SearchReport {
  counts: BenchCatalogue['counts'] & { tools: number; servers: number; queries: number };
  recall: { all: Recall; tuning: Recall; heldOut: Recall; realTools: Recall; generatedTools: Recall };
  /** Wall time per search, and CPU time per search (what the search itself cost, without waits for a core). */
  latency: { samples: number; p50Ms: number; p99Ms: number; maxMs: number; cpuP50Ms: number; cpuP99Ms: number };
  build: { coldMs: number; coldCpuMs: number; medianMs: number; medianCpuMs: number; maxMs: number; heapBytes: number };
  /** Share of the machine's CPU other processes used while searches were timed (0–1). */
  foreignCpu: number;
  weights: typeof DEFAULT_RANKING;
  misses: Array<{ q: string; expect: string; rank: number | undefined; top: string[] }>;
}

async function measureBuild(builds: number): Promise<BuildMeasurement> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', MEASURE_BUILD, String(builds)], {
    timeout: 120_000,
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as BuildMeasurement;
}

export async function runSearchBenchmark(options: SearchBenchOptions): Promise<SearchReport> {
  const catalogue = loadCatalogue();
  const index = buildToolIndex(catalogue.snapshot);
  checkQueries(QUERIES, new Set(catalogue.snapshot.tools.map((t) => t.name)));

  const outcomes = rankQueries(index, QUERIES);
  const realServers = new Set(catalogue.servers.filter((s) => 'package' in s.source).map((s) => s.server));
  const serverOf = new Map(catalogue.snapshot.tools.map((t) => [t.name, t.server]));
  const isReal = (o: QueryOutcome) => realServers.has(serverOf.get(expectedNames(o.query)[0] ?? '') ?? '');

  for (let warm = 0; warm < 2; warm += 1) for (const q of QUERIES) index.search(q.q, { limit: 5 });
  const samples: number[] = [];
  const cpuSamples: number[] = [];
  const before = cpuSnapshot([process.pid]);
  for (let round = 0; round < options.rounds; round += 1) {
    for (const q of QUERIES) {
      const start = performance.now();
      const cpu = process.cpuUsage();
      index.search(q.q, { limit: 5, ...(q.server === undefined ? {} : { server: q.server }) });
      const used = process.cpuUsage(cpu);
      samples.push(performance.now() - start);
      cpuSamples.push((used.user + used.system) / 1000);
    }
  }
  const foreignCpu = foreignShare(before, cpuSnapshot([process.pid]));
  samples.sort((a, b) => a - b);
  cpuSamples.sort((a, b) => a - b);

  const build = await measureBuild(options.builds);
  return {
    counts: { ...catalogue.counts, tools: catalogue.snapshot.tools.length, servers: catalogue.servers.length, queries: QUERIES.length },
    recall: {
      all: recallOf(outcomes),
      tuning: recallOf(outcomes.filter((o) => o.half === 'tuning')),
      heldOut: recallOf(outcomes.filter((o) => o.half === 'held-out')),
      realTools: recallOf(outcomes.filter(isReal)),
      generatedTools: recallOf(outcomes.filter((o) => !isReal(o))),
    },
    latency: {
      samples: samples.length,
      p50Ms: percentileSorted(samples, 50),
      p99Ms: percentileSorted(samples, 99),
      maxMs: samples.at(-1) ?? Number.NaN,
      cpuP50Ms: percentileSorted(cpuSamples, 50),
      cpuP99Ms: percentileSorted(cpuSamples, 99),
    },
    build: {
      coldMs: build.coldBuildMs,
      coldCpuMs: build.coldBuildCpuMs,
      medianMs: median(build.buildMs),
      medianCpuMs: median(build.buildCpuMs),
      maxMs: Math.max(...build.buildMs),
      heapBytes: build.heapBytes,
    },
    foreignCpu,
    weights: DEFAULT_RANKING,
    misses: outcomes
      .filter((o) => o.rank !== 1)
      .map((o) => ({ q: o.query.q, expect: expectedNames(o.query).join(' | '), rank: o.rank, top: o.top })),
  };
}

const pct = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(3)} ms` : 'n/a');
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

export function searchTargets(report: SearchReport): Target[] {
  const { recall, latency, build } = report;
  const at = `${report.counts.tools} tools`;
  return [
    { name: `search recall@5 ≥ ${SEARCH_TARGETS.recallAt5} (${report.counts.queries} queries)`, measured: `${pct(recall.all.at5)} (held-out half ${pct(recall.heldOut.at5)})`, met: recall.all.at5 >= SEARCH_TARGETS.recallAt5 && recall.heldOut.at5 >= SEARCH_TARGETS.recallAt5 },
    { name: `search recall@1 ≥ ${SEARCH_TARGETS.recallAt1}`, measured: `${pct(recall.all.at1)} (held-out half ${pct(recall.heldOut.at1)})`, met: recall.all.at1 >= SEARCH_TARGETS.recallAt1 && recall.heldOut.at1 >= SEARCH_TARGETS.recallAt1 },
    { name: `search p99 ≤ ${SEARCH_TARGETS.p99Ms} ms at ${at}`, measured: `${ms(latency.p99Ms)} wall, ${ms(latency.cpuP99Ms)} CPU`, met: latency.p99Ms <= SEARCH_TARGETS.p99Ms },
    { name: `search index build ≤ ${SEARCH_TARGETS.buildMs} ms at ${at}`, measured: `cold ${ms(build.coldMs)} wall (${ms(build.coldCpuMs)} CPU), warm median ${ms(build.medianMs)} (${ms(build.medianCpuMs)} CPU)`, met: build.coldMs <= SEARCH_TARGETS.buildMs },
    { name: `search index memory ≤ ${SEARCH_TARGETS.heapMB} MB at ${at}`, measured: mb(build.heapBytes), met: build.heapBytes <= SEARCH_TARGETS.heapMB * 2 ** 20 },
  ];
}

export function renderSearchReport(report: SearchReport, style: 'text' | 'markdown'): string {
  const out: string[] = [];
  const heading = (text: string) => out.push('', style === 'markdown' ? `#### ${text}` : `== ${text} ==`, '');
  const { counts } = report;
  heading(`Tool search (${counts.tools} tools on ${counts.servers} servers: ${counts.realTools} real on ${counts.realServers}, ${counts.generatedTools} generated on ${counts.generatedServers}; ${counts.queries} queries)`);
  const row = (name: string, r: Recall) => [name, String(r.queries), pct(r.at1), pct(r.at5), pct(r.mrr)];
  out.push(
    renderTable(
      [{ title: 'queries' }, { title: 'n', align: 'right' }, { title: 'recall@1', align: 'right' }, { title: 'recall@5', align: 'right' }, { title: 'MRR', align: 'right' }],
      [row('all', report.recall.all), row('tuning half', report.recall.tuning), row('held-out half', report.recall.heldOut), row('expecting a real tool', report.recall.realTools), row('expecting a generated tool', report.recall.generatedTools)],
      style,
    ),
  );
  out.push('');
  out.push(
    renderTable(
      [{ title: 'figure' }, { title: 'value', align: 'right' }],
      [
        ['search p50 / p99, wall (limit 5)', `${ms(report.latency.p50Ms)} / ${ms(report.latency.p99Ms)}`],
        ['search p50 / p99, CPU', `${ms(report.latency.cpuP50Ms)} / ${ms(report.latency.cpuP99Ms)}`],
        ['search max, wall', ms(report.latency.maxMs)],
        ['timed searches', String(report.latency.samples)],
        ['CPU taken by other processes meanwhile', `${(report.foreignCpu * 100).toFixed(0)}%`],
        ['index build, cold (first in a process), wall / CPU', `${ms(report.build.coldMs)} / ${ms(report.build.coldCpuMs)}`],
        ['index build, warm median wall / CPU', `${ms(report.build.medianMs)} / ${ms(report.build.medianCpuMs)}`],
        ['index build, warm max wall', ms(report.build.maxMs)],
        ['index memory after GC (heap + typed arrays)', mb(report.build.heapBytes)],
      ],
      style,
    ),
  );
  out.push('', `field weights: ${Object.entries(report.weights.weights).map(([f, w]) => `${f} ${w}`).join(', ')}; BM25F k ${report.weights.bm25.k}, b ${report.weights.bm25.b}, coordination ${report.weights.coordination}; prefix ≥ ${report.weights.prefixMinLength} chars × ${report.weights.prefixWeight}, fuzzy ≥ ${report.weights.fuzzyMinLength} chars × ${report.weights.fuzzyWeight}`);
  return out.join('\n');
}
