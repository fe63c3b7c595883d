/**
 * The tool-integrity phase of `npm run bench`: the scanner's false-positive rate on the recorded
 * real servers (bench/integrity/false-positives.ts), its table of every flagged tool, and its
 * target. Runs in the bench process before any server is started; takes a few seconds.
 */
import type { Target } from '../lib/summary.js';
import { integrityTargets, renderIntegrityReport, runIntegrityBenchmark, type IntegrityReport } from '../integrity/false-positives.js';

export interface IntegrityPhase {
  report: IntegrityReport;
  targets: Target[];
  text: string;
  markdown: string;
}

export async function runIntegrityPhase(options: { quick: boolean }): Promise<IntegrityPhase> {
  const report = runIntegrityBenchmark({ rounds: options.quick ? 1 : 5 });
  return { report, targets: integrityTargets(report), text: renderIntegrityReport(report, 'text'), markdown: renderIntegrityReport(report, 'markdown') };
}
