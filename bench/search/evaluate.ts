/**
 * Where each query's expected tool ranks, and the recall figures from those ranks. Pure (no
 * timing): the same functions score the tuner's candidates, the cross-validation folds and the
 * reported figures.
 */
import type { BenchQuery } from './queries.js';

export interface Recall {
  queries: number;
  at1: number;
  at5: number;
  /** Mean reciprocal rank over the first 20 hits. */
  mrr: number;
}

export interface QueryOutcome {
  query: BenchQuery;
  /** 1-based rank of the first accepted tool in the first 20 hits, or undefined when absent. */
  rank: number | undefined;
  top: string[];
}

/** Anything that answers a query with ranked tool names: the index, or the plain BM25 reference. */
export interface Ranker {
  search(query: string, options: { limit: number; server?: string }): ReadonlyArray<{ name: string }>;
}

/** The names a query accepts as its answer. */
export function expectedNames(query: BenchQuery): readonly string[] {
  return typeof query.expect === 'string' ? [query.expect] : query.expect;
}

export function rankQueries(ranker: Ranker, queries: readonly BenchQuery[]): QueryOutcome[] {
  return queries.map((query) => {
    const hits = ranker.search(query.q, { limit: 20, ...(query.server === undefined ? {} : { server: query.server }) });
    const accepted = expectedNames(query);
    const at = hits.findIndex((h) => accepted.includes(h.name));
    return { query, rank: at < 0 ? undefined : at + 1, top: hits.slice(0, 5).map((h) => h.name) };
  });
}

export function recallOf(outcomes: ReadonlyArray<{ rank: number | undefined }>): Recall {
  const n = outcomes.length;
  const count = (k: number) => outcomes.filter((o) => o.rank !== undefined && o.rank <= k).length;
  const mrr = outcomes.reduce((sum, o) => sum + (o.rank === undefined ? 0 : 1 / o.rank), 0);
  return { queries: n, at1: n === 0 ? Number.NaN : count(1) / n, at5: n === 0 ? Number.NaN : count(5) / n, mrr: n === 0 ? Number.NaN : mrr / n };
}

/** Throws when a query expects a tool the catalogue does not have (a typo would count as a miss). */
export function checkQueries(queries: readonly BenchQuery[], toolNames: ReadonlySet<string>): void {
  const unknown = queries.flatMap(expectedNames).filter((name) => !toolNames.has(name));
  if (unknown.length > 0) throw new TypeError(`queries expect tools the catalogue does not have: ${unknown.join(', ')}`);
}
