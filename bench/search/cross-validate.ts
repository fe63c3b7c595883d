/**
 * How the ranking's parameters are chosen and judged: k-fold cross-validation by server.
 *
 * Every server group (evaluation-sets.ts: a real server, or a generated family) goes to one of
 * `folds` folds, greedily balancing the number of queries (both sets together), so each fold
 * holds out whole servers of both catalogues. For each fold the parameters are tuned by
 * coordinate ascent (one knob at a time over a grid, keeping any gain, until a pass changes
 * nothing) on the other folds alone — their queries, against each catalogue without the held-out
 * servers — and then measured on the held-out fold's queries against the whole catalogue, the way
 * the gateway would search it. Every query is measured exactly once, by parameters that never saw
 * its server's tools or queries: a weight that only fits one catalogue shows up as a loss.
 *
 * The objective is recall@1 + recall@5 + MRR, averaged over the sets so the larger set does not
 * decide alone. The segments are built once; a candidate only re-assembles (weights are applied
 * at query time), which is what makes tuning per fold affordable.
 */
import { buildSegment, segmentSource, type ServerSegment } from '../../src/catalogue/search/segment.js';
import { DEFAULT_RANKING, type RankingOptions } from '../../src/catalogue/search/ranking.js';
import type { SearchableTool } from '../../src/catalogue/search/snapshot.js';
import { assembleToolIndex } from '../../src/catalogue/search/tool-index.js';
import type { Field } from '../../src/catalogue/search/tool-document.js';
import { expectedNames, rankQueries, recallOf, type Recall } from './evaluate.js';
import { groupOf, type EvaluationSet } from './evaluation-sets.js';
import type { BenchQuery } from './queries.js';

type Knob = { name: string; values: number[]; get: (r: RankingOptions) => number; set: (r: RankingOptions, v: number) => RankingOptions };

const weight = (field: Field, values: number[]): Knob => ({
  name: `weights.${field}`,
  values,
  get: (r) => r.weights[field],
  set: (r, v) => ({ ...r, weights: { ...r.weights, [field]: v } }),
});

/** The grid: the description's weight is the unit (1) the others are measured against. */
export const KNOBS: readonly Knob[] = [
  weight('name', [1, 2, 3, 5, 8]),
  weight('title', [0, 1, 2, 4]),
  weight('params', [0, 0.25, 0.5, 1]),
  weight('server', [0.5, 1, 3, 8]),
  weight('instructions', [0, 0.1, 0.3, 1]),
  { name: 'bm25.k', values: [0.8, 1.2, 2, 3], get: (r) => r.bm25.k, set: (r, v) => ({ ...r, bm25: { ...r.bm25, k: v } }) },
  { name: 'bm25.b', values: [0.3, 0.5, 0.75, 0.9], get: (r) => r.bm25.b, set: (r, v) => ({ ...r, bm25: { ...r.bm25, b: v } }) },
  { name: 'coordination', values: [0, 0.5, 1], get: (r) => r.coordination, set: (r, v) => ({ ...r, coordination: v }) },
  { name: 'prefixWeight', values: [0, 0.2, 0.4], get: (r) => r.prefixWeight, set: (r, v) => ({ ...r, prefixWeight: v }) },
];

/** Where tuning starts: BM25F with every field weighted alike, Okapi's k and b, no additions. */
export const START: RankingOptions = {
  weights: { name: 1, title: 1, description: 1, params: 1, server: 1, instructions: 1 },
  bm25: { k: 1.2, b: 0.75 },
  coordination: 0,
  prefixMinLength: DEFAULT_RANKING.prefixMinLength,
  prefixWeight: 0,
};

/** One set's segments (built once) and queries. */
interface Prepared {
  readonly set: EvaluationSet;
  readonly segments: readonly ServerSegment[];
  readonly queryGroups: readonly string[];
}

function prepare(set: EvaluationSet): Prepared {
  const byServer = new Map<string, SearchableTool[]>();
  for (const tool of set.snapshot.tools) {
    let tools = byServer.get(tool.server);
    if (tool.server === '') continue;
    if (tools === undefined) byServer.set(tool.server, (tools = []));
    tools.push(tool);
  }
  const instructions = new Map(set.snapshot.servers.map((s) => [s.name, s.instructions]));
  const segments = [...byServer].map(([server, tools]) => buildSegment(segmentSource(server, instructions.get(server), tools)));
  const serverOf = new Map(set.snapshot.tools.map((t) => [t.name, t.server]));
  return { set, segments, queryGroups: set.queries.map((q) => groupOf(serverOf.get(expectedNames(q)[0] ?? '') ?? '')) };
}

/** Folds: groups in descending query count, each to the fold with the fewest queries so far. */
export function assignFolds(prepared: readonly Prepared[], folds: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of prepared) for (const group of p.queryGroups) counts.set(group, (counts.get(group) ?? 0) + 1);
  const load = new Array<number>(folds).fill(0);
  const foldOf = new Map<string, number>();
  for (const [group, count] of [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
    let fold = 0;
    for (let f = 1; f < folds; f += 1) if ((load[f] as number) < (load[fold] as number)) fold = f;
    foldOf.set(group, fold);
    load[fold] = (load[fold] as number) + count;
  }
  return foldOf;
}

interface TrainingPart {
  readonly segments: readonly ServerSegment[];
  readonly queries: readonly BenchQuery[];
}

function objective(parts: readonly TrainingPart[], ranking: RankingOptions): number {
  let sum = 0;
  for (const part of parts) {
    const r = recallOf(rankQueries(assembleToolIndex(part.segments, { ranking }), part.queries));
    sum += r.at1 + r.at5 + r.mrr;
  }
  return sum / parts.length;
}

/** Coordinate ascent from {@link START} on `parts`. */
export function tune(parts: readonly TrainingPart[], maxPasses = 3): RankingOptions {
  let best = START;
  let bestScore = objective(parts, best);
  for (let pass = 0; pass < maxPasses; pass += 1) {
    let changed = false;
    for (const knob of KNOBS) {
      for (const value of knob.values) {
        if (knob.get(best) === value) continue;
        const candidate = knob.set(best, value);
        const score = objective(parts, candidate);
        if (score > bestScore + 1e-9) {
          best = candidate;
          bestScore = score;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  return best;
}

export interface CrossValidation {
  readonly folds: number;
  /** Per set: recall of each query measured by its held-out fold's parameters. */
  readonly heldOut: ReadonlyMap<string, Recall>;
  /** The same folds with the shipped ranking, for comparison (in-sample: it was tuned on all). */
  readonly shipped: ReadonlyMap<string, Recall>;
  /** The parameters each fold chose. */
  readonly chosen: readonly RankingOptions[];
  /** Tuned on every query of every set: what `DEFAULT_RANKING` should be. */
  readonly allData: RankingOptions;
}

export function crossValidate(sets: readonly EvaluationSet[], folds = 5, maxPasses = 3): CrossValidation {
  const prepared = sets.map(prepare);
  const foldOf = assignFolds(prepared, folds);
  const ranks = prepared.map((p) => new Array<number | undefined>(p.set.queries.length));
  const chosen: RankingOptions[] = [];
  for (let fold = 0; fold < folds; fold += 1) {
    const inFold = (group: string) => foldOf.get(group) === fold;
    const parts = prepared.map((p) => ({
      segments: p.segments.filter((s) => !inFold(groupOf(s.server))),
      queries: p.set.queries.filter((_, i) => !inFold(p.queryGroups[i] as string)),
    }));
    const ranking = tune(parts, maxPasses);
    chosen.push(ranking);
    prepared.forEach((p, s) => {
      const index = assembleToolIndex(p.segments, { ranking });
      const held = p.set.queries.map((q, i) => [q, i] as const).filter(([, i]) => inFold(p.queryGroups[i] as string));
      rankQueries(index, held.map(([q]) => q)).forEach((outcome, n) => ((ranks[s] as Array<number | undefined>)[(held[n] as readonly [BenchQuery, number])[1]] = outcome.rank));
    });
  }
  const allData = tune(prepared.map((p) => ({ segments: p.segments, queries: p.set.queries })), maxPasses);
  return {
    folds,
    heldOut: new Map(prepared.map((p, s) => [p.set.name, recallOf((ranks[s] as Array<number | undefined>).map((rank) => ({ rank })))])),
    shipped: new Map(prepared.map((p) => [p.set.name, recallOf(rankQueries(assembleToolIndex(p.segments), p.set.queries))])),
    chosen,
    allData,
  };
}
