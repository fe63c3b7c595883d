/**
 * The tool-search phase of `npm run bench`: the benchmark of bench/search/ (recall per evaluation
 * set beside a plain BM25, cross-validated; latency, builds and memory at ~5,000 tools), its
 * tables and its targets. Runs in the bench process
 * before any server is started, and its build measurement in a child of its own.
 */
import type { Target } from '../lib/summary.js';
import { renderSearchReport, runSearchBenchmark, searchTargets, type SearchReport } from '../search/benchmark.js';

export interface SearchPhase {
  report: SearchReport;
  targets: Target[];
  text: string;
  markdown: string;
}

export async function runSearchPhase(options: { quick: boolean }): Promise<SearchPhase> {
  const report = await runSearchBenchmark({ rounds: options.quick ? 3 : 20, builds: options.quick ? 3 : 10, folds: options.quick ? 0 : 5, passes: 2 });
  return { report, targets: searchTargets(report), text: renderSearchReport(report, 'text'), markdown: renderSearchReport(report, 'markdown') };
}
