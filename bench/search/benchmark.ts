/**
 * The tool-search benchmark: per evaluation set (evaluation-sets.ts), recall@1, recall@5 and MRR
 * of Portcullis's ranking beside a plain BM25 (plain-bm25.ts), and of the cross-validated
 * ranking (cross-validate.ts: each query measured by parameters tuned without its server); then
 * search latency, build and rebuild times and the memory of the index on the 5,074-tool
 * catalogue, each judged against its target. Method: docs/performance.md, "Search".
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEFAULT_RANKING, type RankingOptions } from '../../src/catalogue/search/ranking.js';
import { buildToolIndex } from '../../src/catalogue/search/tool-index.js';
import { cpuSnapshot, foreignShare } from '../lib/cpu-noise.js';
import { median, percentileSorted } from '../lib/stats.js';
import type { Target } from '../lib/summary.js';
import { renderTable } from '../lib/table.js';
import { crossValidate } from './cross-validate.js';
import { checkQueries, expectedNames, rankQueries, recallOf, type Recall } from './evaluate.js';
import { evaluationSets, sharesNoNameWord } from './evaluation-sets.js';
import type { BuildMeasurement, Timing } from './measure-build.js';
import { plainBm25 } from './plain-bm25.js';

const MEASURE_BUILD = fileURLToPath(new URL('./measure-build.js', import.meta.url));

export const SEARCH_TARGETS = { recallAt5: 0.97, recallAt1: 0.82, p99CpuMs: 2, oneServerMs: 30, heapMB: 30 } as const;

export interface SearchBenchOptions {
  /** Timed passes over the queries. */
  rounds: number;
  /** Builds timed in the child process. */
  builds: number;
  /** Cross-validation folds; 0 skips it. */
  folds: number;
  /** Most coordinate-ascent passes per fold. */
  passes: number;
}

export interface SetReport {
  name: string;
  title: string;
  tools: number;
  queries: number;
  /** Queries sharing no word with their tool's name. */
  noNameWord: number;
  portcullis: Recall;
  plain: Recall;
  /** Held-out recall of the cross-validation, when run. */
  crossValidated: Recall | undefined;
  misses: Array<{ q: string; expect: string; rank: number | undefined; top: string[] }>;
}

export interface SearchReport {
  sets: SetReport[];
  /** Catalogue of the latency figures. */
  latencyTools: number;
  /** Wall time per search, and CPU time per search (what the search itself cost, without waits for a core). */
  latency: { samples: number; p50Ms: number; p99Ms: number; maxMs: number; cpuP50Ms: number; cpuP99Ms: number };
  build: BuildMeasurement;
  /** Share of the machine's CPU other processes used while searches were timed (0–1). */
  foreignCpu: number;
  ranking: RankingOptions;
  cv: { folds: number; chosen: readonly RankingOptions[]; allData: RankingOptions } | undefined;
}

async function measureBuild(builds: number): Promise<BuildMeasurement> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', MEASURE_BUILD, String(builds)], {
    timeout: 300_000,
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as BuildMeasurement;
}

export async function runSearchBenchmark(options: SearchBenchOptions): Promise<SearchReport> {
  const sets = evaluationSets();
  const cv = options.folds > 1 ? crossValidate(sets, options.folds, options.passes) : undefined;
  const reports: SetReport[] = sets.map((set) => {
    checkQueries(set.queries, new Set(set.snapshot.tools.map((t) => t.name)));
    const outcomes = rankQueries(buildToolIndex(set.snapshot), set.queries);
    return {
      name: set.name,
      title: set.title,
      tools: set.snapshot.tools.length,
      queries: set.queries.length,
      noNameWord: set.queries.filter((q) => sharesNoNameWord(q, set.upstreamNames)).length,
      portcullis: recallOf(outcomes),
      plain: recallOf(rankQueries(plainBm25(set.snapshot), set.queries)),
      crossValidated: cv?.heldOut.get(set.name),
      misses: outcomes.filter((o) => o.rank !== 1).map((o) => ({ q: o.query.q, expect: expectedNames(o.query).join(' | '), rank: o.rank, top: o.top })),
    };
  });

  // Latency on the largest catalogue, with every set's queries.
  const largest = sets.reduce((a, b) => (b.snapshot.tools.length > a.snapshot.tools.length ? b : a));
  const index = buildToolIndex(largest.snapshot);
  const queries = sets.flatMap((s) => s.queries);
  for (let warm = 0; warm < 2; warm += 1) for (const q of queries) index.search(q.q, { limit: 5 });
  const samples: number[] = [];
  const cpuSamples: number[] = [];
  const before = cpuSnapshot([process.pid]);
  for (let round = 0; round < options.rounds; round += 1) {
    for (const q of queries) {
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

  return {
    sets: reports,
    latencyTools: largest.snapshot.tools.length,
    latency: {
      samples: samples.length,
      p50Ms: percentileSorted(samples, 50),
      p99Ms: percentileSorted(samples, 99),
      maxMs: samples.at(-1) ?? Number.NaN,
      cpuP50Ms: percentileSorted(cpuSamples, 50),
      cpuP99Ms: percentileSorted(cpuSamples, 99),
    },
    build: await measureBuild(options.builds),
    foreignCpu,
    ranking: DEFAULT_RANKING,
    cv: cv === undefined ? undefined : { folds: cv.folds, chosen: cv.chosen, allData: cv.allData },
  };
}

const pct = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 0)} ms` : 'n/a');
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const both = (t: Timing) => `${ms(median(t.wallMs))} / ${ms(median(t.cpuMs))}`;

export function searchTargets(report: SearchReport): Target[] {
  const { latency, build } = report;
  const targets: Target[] = [];
  for (const set of report.sets) {
    const judged = [set.portcullis, ...(set.crossValidated === undefined ? [] : [set.crossValidated])];
    const figures = `${pct(set.portcullis.at5)}${set.crossValidated === undefined ? '' : ` (cross-validated ${pct(set.crossValidated.at5)})`}`;
    const firsts = `${pct(set.portcullis.at1)}${set.crossValidated === undefined ? '' : ` (cross-validated ${pct(set.crossValidated.at1)})`}`;
    targets.push(
      { name: `search recall@5 ≥ ${SEARCH_TARGETS.recallAt5} on ${set.name}`, measured: figures, met: judged.every((r) => r.at5 >= SEARCH_TARGETS.recallAt5) },
      { name: `search recall@1 ≥ ${SEARCH_TARGETS.recallAt1} on ${set.name}`, measured: firsts, met: judged.every((r) => r.at1 >= SEARCH_TARGETS.recallAt1) },
      {
        name: `search never below plain BM25 on ${set.name}`,
        measured: `recall@1 ${pct(set.portcullis.at1)} vs ${pct(set.plain.at1)}, recall@5 ${pct(set.portcullis.at5)} vs ${pct(set.plain.at5)}, MRR ${pct(set.portcullis.mrr)} vs ${pct(set.plain.mrr)}`,
        met: judged.every((r) => r.at1 >= set.plain.at1 && r.at5 >= set.plain.at5 && r.mrr >= set.plain.mrr),
      },
    );
  }
  targets.push(
    { name: `search p99 ≤ ${SEARCH_TARGETS.p99CpuMs} ms CPU at ${report.latencyTools} tools`, measured: `${ms(latency.cpuP99Ms)} CPU (${ms(latency.p99Ms)} wall)`, met: latency.cpuP99Ms <= SEARCH_TARGETS.p99CpuMs },
    ...[build.oneServer.typical, build.oneServer.largest].map((rebuild, i) => ({
      name: `one-server rebuild ≤ ${SEARCH_TARGETS.oneServerMs} ms at ${build.tools} tools (${i === 0 ? 'a server of median size' : 'the largest server'})`,
      measured: `median ${ms(median(rebuild.timing.cpuMs))} CPU (${ms(median(rebuild.timing.wallMs))} wall), ${rebuild.server} (${rebuild.tools} tools) changed, ${rebuild.builds} segments tokenised in ${rebuild.timing.cpuMs.length} rebuilds`,
      met: median(rebuild.timing.cpuMs) <= SEARCH_TARGETS.oneServerMs && rebuild.builds === rebuild.timing.cpuMs.length,
    })),
    { name: `an unchanged re-list (ttlMs: 0) tokenises nothing`, measured: `${build.unchangedBuilds} segments built in ${build.unchanged.cpuMs.length} re-lists`, met: build.unchangedBuilds === 0 },
    { name: `search index memory ≤ ${SEARCH_TARGETS.heapMB} MB at ${build.tools} tools`, measured: mb(build.heapBytes), met: build.heapBytes <= SEARCH_TARGETS.heapMB * 2 ** 20 },
  );
  return targets;
}

export function renderSearchReport(report: SearchReport, style: 'text' | 'markdown'): string {
  const out: string[] = [];
  const heading = (text: string) => out.push('', style === 'markdown' ? `#### ${text}` : `== ${text} ==`, '');
  heading('Tool search: evaluation sets');
  const rows: string[][] = [];
  for (const set of report.sets) {
    const row = (ranking: string, r: Recall) => [set.name, ranking, String(r.queries), pct(r.at1), pct(r.at5), pct(r.mrr)];
    rows.push(row('Portcullis', set.portcullis));
    if (set.crossValidated !== undefined) rows.push(row(`Portcullis, cross-validated (${report.cv?.folds ?? 0} folds by server)`, set.crossValidated));
    rows.push(row('plain BM25 (k1 1.2, b 0.75, fields concatenated, no stemming)', set.plain));
  }
  out.push(
    renderTable(
      [{ title: 'set' }, { title: 'ranking' }, { title: 'n', align: 'right' }, { title: 'recall@1', align: 'right' }, { title: 'recall@5', align: 'right' }, { title: 'MRR', align: 'right' }],
      rows,
      style,
    ),
  );
  out.push('');
  for (const set of report.sets) out.push(`${set.name}: ${set.title}; ${set.noNameWord} of ${set.queries} queries share no word with their tool's name.`);
  heading(`Tool search: speed and memory (${report.latencyTools} tools)`);
  const { build } = report;
  out.push(
    renderTable(
      [{ title: 'figure' }, { title: 'value', align: 'right' }],
      [
        ['search p50 / p99, wall (limit 5)', `${ms(report.latency.p50Ms)} / ${ms(report.latency.p99Ms)}`],
        ['search p50 / p99, CPU', `${ms(report.latency.cpuP50Ms)} / ${ms(report.latency.cpuP99Ms)}`],
        ['search max, wall', ms(report.latency.maxMs)],
        ['timed searches', String(report.latency.samples)],
        ['CPU taken by other processes meanwhile', `${(report.foreignCpu * 100).toFixed(0)}%`],
        ['full build, cold (first in a process), wall / CPU', both(build.cold)],
        ['full build, warm median, wall / CPU', both(build.full)],
        [`one-server rebuild (${build.oneServer.typical.server}, ${build.oneServer.typical.tools} tools, changed), median wall / CPU`, both(build.oneServer.typical.timing)],
        [`one-server rebuild (${build.oneServer.largest.server}, ${build.oneServer.largest.tools} tools, changed), median wall / CPU`, both(build.oneServer.largest.timing)],
        ['unchanged re-list (same definitions, new objects), median wall / CPU', both(build.unchanged)],
        ['index memory after GC (heap + typed arrays)', mb(build.heapBytes)],
      ],
      style,
    ),
  );
  const r = report.ranking;
  out.push('', `ranking: field weights ${Object.entries(r.weights).map(([f, w]) => `${f} ${w}`).join(', ')}; BM25F k ${r.bm25.k}, b ${r.bm25.b}; coordination ${r.coordination}; prefix ≥ ${r.prefixMinLength} chars × ${r.prefixWeight}`);
  if (report.cv !== undefined && JSON.stringify(report.cv.allData) !== JSON.stringify(report.ranking)) {
    out.push(`note: tuning on every query now chooses ${JSON.stringify(report.cv.allData)}; src/catalogue/search/ranking.ts holds other values`);
  }
  return out.join('\n');
}
