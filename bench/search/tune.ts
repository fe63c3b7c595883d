/**
 * One-off: tunes the ranking parameters on the tuning half of the query set by coordinate
 * ascent (one parameter at a time over a grid, keeping any improvement, until a pass changes
 * nothing), then prints the result and its recall on both halves. The held-out half is never
 * used to choose. Not part of `npm run bench`; run it by hand after changing the query set or
 * the index, and copy the printed parameters into src/catalogue/search/ranking.ts:
 *
 *   npm run build && node dist/bench/search/tune.js
 */
import { buildToolIndex } from '../../src/catalogue/search/tool-index.js';
import { DEFAULT_RANKING, type RankingOptions } from '../../src/catalogue/search/ranking.js';
import type { Field } from '../../src/catalogue/search/tool-document.js';
import { loadCatalogue } from './catalogue.js';
import { halfOf, rankQueries, recallOf } from './evaluate.js';
import { QUERIES } from './queries.js';

const { snapshot } = loadCatalogue();
const tuning = QUERIES.filter((_, i) => halfOf(i) === 'tuning');
const heldOut = QUERIES.filter((_, i) => halfOf(i) === 'held-out');

/** Recall@1 + recall@5 + MRR on the tuning half: rewards the first place and the top five alike. */
function objective(ranking: RankingOptions): number {
  const r = recallOf(rankQueries(buildToolIndex(snapshot, { ranking }), tuning));
  return r.at1 + r.at5 + r.mrr;
}

type Knob = { name: string; values: number[]; set: (r: RankingOptions, v: number) => RankingOptions };
const weight = (field: Field, values: number[]): Knob => ({
  name: `weights.${field}`,
  values,
  set: (r, v) => ({ ...r, weights: { ...r.weights, [field]: v } }),
});
const KNOBS: Knob[] = [
  weight('name', [1, 2, 3, 4, 6, 8, 10, 12]),
  weight('title', [0.5, 1, 2, 3, 4]),
  weight('params', [0, 0.1, 0.25, 0.5, 1]),
  weight('server', [0.5, 1, 2, 3, 4, 6, 8, 10]),
  weight('instructions', [0, 0.1, 0.2, 0.3, 0.5, 1]),
  { name: 'bm25.k', values: [0.6, 0.9, 1.2, 1.6, 2.2, 3, 4], set: (r, v) => ({ ...r, bm25: { ...r.bm25, k: v } }) },
  { name: 'bm25.b', values: [0.3, 0.5, 0.7, 0.85, 1], set: (r, v) => ({ ...r, bm25: { ...r.bm25, b: v } }) },
  { name: 'coordination', values: [0, 0.5, 1, 1.5, 2], set: (r, v) => ({ ...r, coordination: v }) },
  { name: 'prefixWeight', values: [0, 0.2, 0.4, 0.6, 0.8], set: (r, v) => ({ ...r, prefixWeight: v }) },
  { name: 'fuzzyWeight', values: [0, 0.2, 0.3, 0.5, 0.7], set: (r, v) => ({ ...r, fuzzyWeight: v }) },
  { name: 'prefixMinLength', values: [3, 4, 5, 6], set: (r, v) => ({ ...r, prefixMinLength: v }) },
];

let best = DEFAULT_RANKING;
let bestScore = objective(best);
process.stderr.write(`start ${bestScore.toFixed(4)}\n`);
for (let pass = 1; pass <= 4; pass += 1) {
  let changed = false;
  for (const knob of KNOBS) {
    for (const value of knob.values) {
      const candidate = knob.set(best, value);
      const score = objective(candidate);
      if (score > bestScore + 1e-9) {
        best = candidate;
        bestScore = score;
        changed = true;
        process.stderr.write(`pass ${pass}: ${knob.name} = ${value} → ${score.toFixed(4)}\n`);
      }
    }
  }
  if (!changed) break;
}
const index = buildToolIndex(snapshot, { ranking: best });
const show = (name: string, r: ReturnType<typeof recallOf>) => `${name}: recall@1 ${r.at1.toFixed(3)}, recall@5 ${r.at5.toFixed(3)}, MRR ${r.mrr.toFixed(3)}`;
process.stdout.write(`${JSON.stringify(best, null, 2)}\n${show('tuning', recallOf(rankQueries(index, tuning)))}\n${show('held-out', recallOf(rankQueries(index, heldOut)))}\n`);
