/**
 * The tool-search benchmark on its own (it is also a phase of `npm run bench`):
 *
 *   npm run build && node dist/bench/search/run.js [--rounds N] [--builds N] [--folds N] [--passes N] [--misses]
 *
 * Prints the figures against their targets; `--folds 0` skips the cross-validation; `--misses`
 * lists, per set, the queries whose expected tool did not rank first, with where it ranked and
 * what came first. Exit code 1 when a target is missed.
 */
import { parseArgs } from 'node:util';
import { renderTable } from '../lib/table.js';
import { renderSearchReport, runSearchBenchmark, searchTargets } from './benchmark.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string' }, builds: { type: 'string' }, folds: { type: 'string' }, passes: { type: 'string' }, misses: { type: 'boolean', default: false } },
});
const report = await runSearchBenchmark({
  rounds: Number(values.rounds ?? '20'),
  builds: Number(values.builds ?? '10'),
  folds: Number(values.folds ?? '5'),
  passes: Number(values.passes ?? '3'),
});
const targets = searchTargets(report);
process.stdout.write(`${renderSearchReport(report, 'text')}\n\n`);
process.stdout.write(`${renderTable([{ title: 'target' }, { title: 'measured' }, { title: 'met' }], targets.map((t) => [t.name, t.measured, t.met === true ? 'yes' : 'NO']), 'text')}\n`);
if (values.misses === true) {
  for (const set of report.sets) {
    process.stdout.write(`\n${set.name}, not first:\n`);
    for (const m of set.misses) process.stdout.write(`  [${m.rank ?? '—'}] ${m.q}  → want ${m.expect}; got ${m.top.slice(0, 3).join(', ')}\n`);
  }
}
process.exitCode = targets.every((t) => t.met === true) ? 0 : 1;
