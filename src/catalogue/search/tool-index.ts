/**
 * A tool search index over one catalogue snapshot: BM25F (per-field BM25+ scores, weighted and
 * summed, with MiniSearch's coordination factor for the number of query terms matched) over the
 * fields of `tool-document.ts`, with prefix and one-edit fuzzy matching for longer terms.
 *
 * Built once per snapshot and then only read: a search never rebuilds or mutates it, so the
 * catalogue rebuilds it when its tool list changes (on `list_changed`), never per query. It holds
 * exactly the tools it was given; a tool left out of the snapshot cannot be found.
 */
import MiniSearch from 'minisearch';
import { DEFAULT_RANKING, type RankingOptions } from './ranking.js';
import type { ToolSnapshot } from './snapshot.js';
import { FIELDS, toolDocument, type ToolDocument } from './tool-document.js';
import { tokenize } from './tokenize.js';

/** Results per search when the caller names no limit, and the most it may ask for. */
export const SEARCH_LIMIT = { default: 5, max: 20 } as const;
/** Longest query accepted, in characters, and most query terms used (the rest are ignored). */
export const MAX_QUERY_LENGTH = 1_000;
const MAX_QUERY_TERMS = 32;

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

interface Entry {
  readonly name: string;
  readonly server: string;
}

/**
 * Builds the index of a snapshot. Tools with a duplicate exposed name are indexed once (the
 * first); the catalogue's merge never produces duplicates, so that only guards the invariant.
 */
export function buildToolIndex(snapshot: ToolSnapshot, options: ToolIndexOptions = {}): ToolIndex {
  const ranking = options.ranking ?? DEFAULT_RANKING;
  const servers = new Map(snapshot.servers.map((s) => [s.name, s]));
  const entries: Entry[] = [];
  const byExactName = new Map<string, number>();
  const documents: Array<ToolDocument & { id: number }> = [];
  for (const tool of snapshot.tools) {
    const key = tool.name.toLowerCase();
    if (byExactName.has(key)) continue;
    const id = entries.length;
    byExactName.set(key, id);
    entries.push({ name: tool.name, server: tool.server });
    documents.push({ id, ...toolDocument(tool, servers.get(tool.server)) });
  }

  const instructionTerms = new Map<string, string[]>();
  const index = new MiniSearch<ToolDocument & { id: number }>({
    fields: [...FIELDS],
    storeFields: [],
    tokenize: (text, field) => {
      // Every tool of a server carries the same instructions: tokenise them once per server.
      if (field !== 'instructions') return tokenize(text);
      let terms = instructionTerms.get(text);
      if (terms === undefined) instructionTerms.set(text, (terms = tokenize(text)));
      return terms;
    },
    processTerm: (term) => term,
  });
  index.addAll(documents);

  const searchOptions = {
    boost: { ...ranking.weights },
    bm25: { ...ranking.bm25 },
    weights: { prefix: ranking.prefixWeight, fuzzy: ranking.fuzzyWeight },
    prefix: (term: string) => term.length >= ranking.prefixMinLength && !/[^\p{L}\p{N}]/u.test(term),
    fuzzy: (term: string) => (term.length >= ranking.fuzzyMinLength && !/[^\p{L}\p{N}]/u.test(term) ? 1 : false),
    maxFuzzy: 1,
    combineWith: 'OR' as const,
    tokenize: (text: string) => [...new Set(tokenize(text))].slice(0, MAX_QUERY_TERMS),
    processTerm: (term: string) => term,
  };

  return {
    size: entries.length,
    search(query: string, { limit = SEARCH_LIMIT.default, server }: SearchOptions = {}): SearchHit[] {
      if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT.max) {
        throw new RangeError(`limit must be an integer from 1 to ${SEARCH_LIMIT.max}`);
      }
      if (query.length > MAX_QUERY_LENGTH) throw new RangeError(`query must be at most ${MAX_QUERY_LENGTH} characters`);
      const filter = server === undefined ? undefined : (result: { id: number }) => entries[result.id]?.server === server;
      const hits = index
        .search(query, filter === undefined ? searchOptions : { ...searchOptions, filter })
        .map((r) => ({ id: r.id as number, score: r.score }));
      const exact = byExactName.get(query.trim().toLowerCase());
      hits.sort((a, b) => {
        if (a.id === exact || b.id === exact) return a.id === exact ? -1 : 1;
        return b.score - a.score || compareNames(entries[a.id]!.name, entries[b.id]!.name);
      });
      return hits.slice(0, limit).map(({ id, score }) => ({ name: entries[id]!.name, server: entries[id]!.server, score }));
    },
  };
}

/** Code-unit order: the same on every machine and locale, unlike `localeCompare`. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
