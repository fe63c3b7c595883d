/**
 * A tool search index over one catalogue snapshot: BM25F over the fields of `tool-document.ts`
 * (postings in `postings.ts`), with prefix and one-edit fuzzy matching (`term-expansion.ts`) and
 * a coordination factor for the share of query terms a tool matches.
 *
 * Built once per snapshot and then only read: a search never rebuilds or mutates it, so the
 * catalogue rebuilds it when its tool list changes (on `list_changed`), never per query. It holds
 * exactly the tools it was given; a tool left out of the snapshot cannot be found.
 *
 * Hand-rolled rather than MiniSearch or Orama, for a measured reason: on the benchmark's
 * 5,074-tool catalogue MiniSearch 7.2 took ~3 ms of CPU per exact-match search and ~0.6 s to
 * index pre-tokenised text, Orama 3.1 ~6 ms per search (15 ms with typo tolerance) and ~1.7 s
 * to index — against targets of 2 ms at p99 and 300 ms per build (docs/performance.md, "Search").
 */
import { postingsScorer } from './scorer.js';
import { buildPostings } from './postings.js';
import { DEFAULT_RANKING, type RankingOptions } from './ranking.js';
import type { ToolSnapshot } from './snapshot.js';
import { toolDocument, type ToolDocument } from './tool-document.js';
import { tokenize } from './tokenize.js';

/** Results per search when the caller names no limit, and the most it may ask for. */
export const SEARCH_LIMIT = { default: 5, max: 20 } as const;
/** Longest query accepted, in characters; at most {@link MAX_QUERY_TERMS} of its terms are used. */
export const MAX_QUERY_LENGTH = 1_000;
export const MAX_QUERY_TERMS = 32;

export interface SearchOptions {
  /** Number of hits, 1 to {@link SEARCH_LIMIT}.max; {@link SEARCH_LIMIT}.default when absent. */
  readonly limit?: number;
  /** Only tools of this server. A server the snapshot does not have yields no hits. */
  readonly server?: string;
}

export interface SearchHit {
  /** The exposed tool name, as in `tools/list`. */
  readonly name: string;
  readonly server: string;
  readonly score: number;
}

export interface ToolIndex {
  /** Number of tools indexed. */
  readonly size: number;
  /**
   * The best matches for `query`, best first; equal scores are ordered by exposed name, so the
   * same snapshot and query always give the same list. A query that is exactly a tool's exposed
   * name (case aside) puts that tool first. Throws `RangeError` for a limit outside 1…20 or a
   * query longer than {@link MAX_QUERY_LENGTH}.
   */
  search(query: string, options?: SearchOptions): SearchHit[];
}

export interface ToolIndexOptions {
  readonly ranking?: RankingOptions;
}

/**
 * Builds the index of a snapshot. Tools with a duplicate exposed name are indexed once (the
 * first); the catalogue's merge never produces duplicates, so that only guards the invariant.
 */
export function buildToolIndex(snapshot: ToolSnapshot, options: ToolIndexOptions = {}): ToolIndex {
  const ranking = options.ranking ?? DEFAULT_RANKING;
  const servers = new Map(snapshot.servers.map((s) => [s.name, s]));
  const names: string[] = [];
  const serverNames: string[] = [];
  const byExactName = new Map<string, number>();
  const documents: ToolDocument[] = [];
  for (const tool of snapshot.tools) {
    const key = tool.name.toLowerCase();
    if (byExactName.has(key)) continue;
    byExactName.set(key, names.length);
    names.push(tool.name);
    serverNames.push(tool.server);
    documents.push(toolDocument(tool, servers.get(tool.server)));
  }
  const postings = buildPostings(documents, ranking);
  const serverIds = new Map<string, number>();
  const serverOf = Int32Array.from(serverNames, (s) => {
    let id = serverIds.get(s);
    if (id === undefined) serverIds.set(s, (id = serverIds.size));
    return id;
  });
  // Rank of each tool in exposed-name order (code units, the same on every machine and locale).
  const order = names.map((_, i) => i).sort((a, b) => ((names[a] as string) < (names[b] as string) ? -1 : 1));
  const nameRank = new Int32Array(names.length);
  order.forEach((doc, rank) => (nameRank[doc] = rank));
  const score = postingsScorer(postings, ranking, nameRank);

  return {
    size: names.length,
    search(query: string, { limit = SEARCH_LIMIT.default, server }: SearchOptions = {}): SearchHit[] {
      if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT.max) {
        throw new RangeError(`limit must be an integer from 1 to ${SEARCH_LIMIT.max}`);
      }
      if (query.length > MAX_QUERY_LENGTH) throw new RangeError(`query must be at most ${MAX_QUERY_LENGTH} characters`);
      let only: number | undefined;
      if (server !== undefined) {
        only = serverIds.get(server);
        if (only === undefined) return [];
      }
      const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
      const exact = byExactName.get(query.trim().toLowerCase());
      const pinned = exact !== undefined && (only === undefined || serverOf[exact] === only) ? exact : undefined;
      const hits = score(terms, limit, only === undefined ? undefined : (doc) => serverOf[doc] === only, pinned);
      return hits.map(({ doc, score: s }) => ({ name: names[doc] as string, server: serverNames[doc] as string, score: s }));
    },
  };
}
