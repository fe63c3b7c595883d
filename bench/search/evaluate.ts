/**
 * Recall of a tool index on the query set: for each query, where its expected tool ranks. Pure
 * (no timing): the same function scores the tuner's candidates and the reported figures.
 */
import type { ToolIndex } from '../../src/catalogue/search/tool-index.js';
import type { BenchQuery } from './queries.js';

export type QueryHalf = 'tuning' | 'held-out';

/** Queries alternate between the halves in file order, so both halves cover every server kind. */
export function halfOf(position: number): QueryHalf {
  return position % 2 === 0 ? 'tuning' : 'held-out';
}

export interface Recall {
  queries: number;
  at1: number;
  at5: number;
  /** Mean reciprocal rank over the first 20 hits. */
  mrr: number;
}

export interface QueryOutcome {
  query: BenchQuery;
  half: QueryHalf;
  /** 1-based rank of the expected tool in the first 20 hits, or undefined when absent. */
  rank: number | undefined;
  top: string[];
}

export function rankQueries(index: ToolIndex, queries: readonly BenchQuery[]): QueryOutcome[] {
  return queries.map((query, position) => {
    const hits = index.search(query.q, { limit: 20, ...(query.server === undefined ? {} : { server: query.server }) });
    const accepted = expectedNames(query);
    const at = hits.findIndex((h) => accepted.includes(h.name));
    return { query, half: halfOf(position), rank: at < 0 ? undefined : at + 1, top: hits.slice(0, 5).map((h) => h.name) };
  });
}

export function recallOf(outcomes: readonly QueryOutcome[]): Recall {
  const n = outcomes.length;
  const count = (k: number) => outcomes.filter((o) => o.rank !== undefined && o.rank <= k).length;
  const mrr = outcomes.reduce((sum, o) => sum + (o.rank === undefined ? 0 : 1 / o.rank), 0);
  return { queries: n, at1: n === 0 ? Number.NaN : count(1) / n, at5: n === 0 ? Number.NaN : count(5) / n, mrr: n === 0 ? Number.NaN : mrr / n };
}

/** Throws when a query expects a tool the catalogue does not have (a typo would count as a miss). */
export function checkQueries(queries: readonly BenchQuery[], toolNames: ReadonlySet<string>): void {
  const unknown = queries.flatMap(expectedNames).filter((name) => !toolNames.has(name));
  if (unknown.length > 0) throw new TypeError(`queries expect tools the catalogue does not have: ${unknown.join(', ')}`);
  const seen = new Set<string>();
  for (const q of queries) {
    if (seen.has(q.q)) throw new TypeError(`query written twice: ${q.q}`);
    seen.add(q.q);
  }
}

/** The names a query accepts as its answer. */
export function expectedNames(query: BenchQuery): readonly string[] {
  return typeof query.expect === 'string' ? [query.expect] : query.expect;
}
