/**
 * Chooses the ranking parameters and judges the choice (cross-validate.ts): prints, per
 * evaluation set, the recall of the held-out folds, each fold's choice, and the parameters tuned
 * on everything — the values `DEFAULT_RANKING` (src/catalogue/search/ranking.ts) should hold. Not
 * part of `npm run bench` (which reports the cross-validated figures too); run it by hand after
 * changing a query set, a catalogue or the index:
 *
 *   npm run build && node dist/bench/search/tune.js [--folds 5] [--passes 3]
 */
import { parseArgs } from 'node:util';
import { crossValidate } from './cross-validate.js';
import { evaluationSets } from './evaluation-sets.js';

const { values } = parseArgs({ options: { folds: { type: 'string' }, passes: { type: 'string' } } });
const started = performance.now();
const cv = crossValidate(evaluationSets(), Number(values.folds ?? '5'), Number(values.passes ?? '3'));
const show = (r: { at1: number; at5: number; mrr: number; queries: number }) => `recall@1 ${r.at1.toFixed(3)}, recall@5 ${r.at5.toFixed(3)}, MRR ${r.mrr.toFixed(3)} (${r.queries} queries)`;
for (const [set, recall] of cv.heldOut) process.stdout.write(`${set}: held-out ${show(recall)}; shipped ranking ${show(cv.shipped.get(set) as typeof recall)}\n`);
cv.chosen.forEach((r, fold) => process.stdout.write(`fold ${fold}: ${JSON.stringify(r)}\n`));
process.stdout.write(`all data: ${JSON.stringify(cv.allData, null, 2)}\n(${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
