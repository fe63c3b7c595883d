/**
 * A tool search index over one catalogue snapshot, assembled from one segment per server
 * (`segment.ts`): BM25F (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
 * Beyond", §3.3) over the fields of `tool-document.ts`, with prefix matching and a coordination
 * factor for the share of query terms a tool matches (`ranking.ts` says which of these earned
 * their place, and how that was judged).
 *
 * Assembling reads no text: it sums the segments' field lengths into the catalogue's averages and
 * folds each document's field weights and length normalisation into one factor per field. A
 * query term's document frequency is summed over the segments when the query is scored, so a
 * segment never depends on the others and an index never mutates one. A search never rebuilds
 * anything; the index holds exactly the tools it was given, and a tool left out cannot be found.
 *
 * Hand-rolled rather than MiniSearch or Orama, for a measured reason: on the benchmark's
 * 5,074-tool catalogue MiniSearch 7.2 took ~3 ms of CPU per exact-match search and ~0.6 s to
 * index pre-tokenised text, Orama 3.1 ~6 ms per search and ~1.7 s to index — against targets of
 * 2 ms at p99 and 30 ms for a one-server rebuild (docs/performance.md, "Search").
 */
import { DEFAULT_RANKING, type RankingOptions } from './ranking.js';
import { buildSegment, PREFIX_KEY_LENGTH, segmentSource, type ServerSegment } from './segment.js';
import type { SearchableTool, ToolSnapshot } from './snapshot.js';
import { FIELDS } from './tool-document.js';
import { tokenize } from './tokenize.js';

/** Results per search when the caller names no limit, and the most it may ask for. */
export const SEARCH_LIMIT = { default: 5, max: 20 } as const;
/** Longest query accepted, in characters; at most {@link MAX_QUERY_TERMS} of its terms are used. */
export const MAX_QUERY_LENGTH = 1_000;
export const MAX_QUERY_TERMS = 32;
/** Most index terms one query term expands to by prefix. */
export const MAX_PREFIX_EXPANSIONS = 32;

const FIELD_COUNT = FIELDS.length;
/** Terms made of letters and digits only: compound identifier terms are matched exactly. */
const PLAIN = /^[a-z0-9]+$/;

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
  /** The segments it was assembled from, one per server, in the order given. */
  readonly segments: readonly ServerSegment[];
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
 * Builds the index of a snapshot from scratch (every server tokenised): for tests and the
 * benchmark. The gateway assembles from cached segments instead (`segment-cache.ts`).
 */
export function buildToolIndex(snapshot: ToolSnapshot, options: ToolIndexOptions = {}): ToolIndex {
  const instructions = new Map(snapshot.servers.map((s) => [s.name, s.instructions]));
  const byServer = new Map<string, SearchableTool[]>();
  for (const tool of snapshot.tools) {
    let tools = byServer.get(tool.server);
    if (tools === undefined) byServer.set(tool.server, (tools = []));
    tools.push(tool);
  }
  const segments = [...byServer].map(([server, tools]) => buildSegment(segmentSource(server, instructions.get(server), tools)));
  return assembleToolIndex(segments, options);
}

/** One index term a query term matches, where it occurs, and how much a match counts. */
interface Expansion {
  readonly weight: number;
  /** Segment indexes and the term's id in each, pairwise. */
  readonly segments: number[];
  readonly ids: number[];
  readonly df: number;
}

/**
 * The index over `segments` (one per server; a tool name two segments share is found in the
 * first). Costs a pass over the documents' field lengths, no tokenising.
 */
export function assembleToolIndex(segments: readonly ServerSegment[], options: ToolIndexOptions = {}): ToolIndex {
  const ranking = options.ranking ?? DEFAULT_RANKING;
  if (ranking.prefixMinLength < PREFIX_KEY_LENGTH) throw new RangeError(`prefixMinLength must be at least ${PREFIX_KEY_LENGTH}`);
  const { k, b } = ranking.bm25;
  const offsets = new Int32Array(segments.length + 1);
  segments.forEach((segment, s) => (offsets[s + 1] = (offsets[s] as number) + segment.names.length));
  const n = offsets[segments.length] as number;

  const totals = new Float64Array(FIELD_COUNT);
  for (const segment of segments) for (let f = 0; f < FIELD_COUNT; f += 1) totals[f] = (totals[f] as number) + (segment.fieldTotals[f] as number);
  const weights = FIELDS.map((field) => ranking.weights[field]);
  // Each document's factor per field: weight / (1 − b + b · length / average length).
  const factors = new Float32Array(n * FIELD_COUNT);
  segments.forEach((segment, s) => {
    const base = (offsets[s] as number) * FIELD_COUNT;
    for (let i = 0; i < segment.fieldLengths.length; i += 1) {
      const f = i % FIELD_COUNT;
      const average = n === 0 || totals[f] === 0 ? 1 : (totals[f] as number) / n;
      factors[base + i] = (weights[f] as number) / (1 - b + (b * (segment.fieldLengths[i] as number)) / average);
    }
  });

  const scores = new Float64Array(n);
  const best = new Float64Array(n);
  const matched = new Uint8Array(n);

  const postingsOf = (s: number, id: number) => {
    const segment = segments[s] as ServerSegment;
    return (segment.starts[id + 1] as number) - (segment.starts[id] as number);
  };
  const expansionsOf = (term: string): Expansion[] => {
    const exact: Expansion = { weight: 1, segments: [], ids: [], df: 0 };
    segments.forEach((segment, s) => {
      const id = segment.termIds.get(term);
      if (id !== undefined) (exact.segments.push(s), exact.ids.push(id));
    });
    const out = [{ ...exact, df: exact.segments.reduce((df, s, i) => df + postingsOf(s, exact.ids[i] as number), 0) }];
    if (ranking.prefixWeight > 0 && term.length >= ranking.prefixMinLength && PLAIN.test(term)) {
      for (const longer of prefixMatches(segments, term)) {
        out.push({ weight: ranking.prefixWeight, ...longer, df: longer.segments.reduce((df, s, i) => df + postingsOf(s, longer.ids[i] as number), 0) });
      }
    }
    return out;
  };

  const nameOf = (doc: number): string => {
    const s = segmentOf(offsets, doc);
    return (segments[s] as ServerSegment).names[doc - (offsets[s] as number)] as string;
  };

  return {
    size: n,
    segments,
    search(query: string, { limit = SEARCH_LIMIT.default, server }: SearchOptions = {}): SearchHit[] {
      if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT.max) {
        throw new RangeError(`limit must be an integer from 1 to ${SEARCH_LIMIT.max}`);
      }
      if (query.length > MAX_QUERY_LENGTH) throw new RangeError(`query must be at most ${MAX_QUERY_LENGTH} characters`);
      const scored: number[] = [];
      segments.forEach((segment, s) => {
        if (server === undefined || segment.server === server) scored.push(s);
      });
      if (scored.length === 0) return [];
      const only = server === undefined ? undefined : new Set(scored);

      const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
      const touched: number[] = [];
      for (const term of terms) {
        const termTouched: number[] = [];
        for (const expansion of expansionsOf(term)) {
          if (expansion.df === 0) continue;
          const idf = Math.log(1 + (n - expansion.df + 0.5) / (expansion.df + 0.5)) * expansion.weight * (k + 1);
          for (let at = 0; at < expansion.segments.length; at += 1) {
            const s = expansion.segments[at] as number;
            if (only !== undefined && !only.has(s)) continue;
            const id = expansion.ids[at] as number;
            const segment = segments[s] as ServerSegment;
            const offset = offsets[s] as number;
            const end = segment.starts[id + 1] as number;
            for (let p = segment.starts[id] as number; p < end; p += 1) {
              const doc = offset + (segment.docs[p] as number);
              let tf = 0;
              for (let f = 0; f < FIELD_COUNT; f += 1) {
                const count = segment.counts[p * FIELD_COUNT + f] as number;
                if (count !== 0) tf += count * (factors[doc * FIELD_COUNT + f] as number);
              }
              if (tf === 0) continue;
              const score = (idf * tf) / (tf + k);
              const previous = best[doc] as number;
              if (previous === 0) termTouched.push(doc);
              if (score > previous) best[doc] = score;
            }
          }
        }
        for (const doc of termTouched) {
          if (scores[doc] === 0) touched.push(doc);
          scores[doc] = (scores[doc] as number) + (best[doc] as number);
          matched[doc] = (matched[doc] as number) + 1;
          best[doc] = 0;
        }
      }

      const pinned = exactName(segments, offsets, scored, query.trim().toLowerCase());
      const top: Array<{ doc: number; score: number }> = [];
      const better = (a: { doc: number; score: number }, c: { doc: number; score: number }) => a.score > c.score || (a.score === c.score && nameOf(a.doc) < nameOf(c.doc));
      const offer = (entry: { doc: number; score: number }) => {
        if (top.length === limit && !better(entry, top[limit - 1] as { doc: number; score: number })) return;
        let at = top.length === limit ? limit - 1 : top.length;
        while (at > 0 && better(entry, top[at - 1] as { doc: number; score: number })) {
          top[at] = top[at - 1] as { doc: number; score: number };
          at -= 1;
        }
        top[at] = entry;
      };
      let pinnedEntry: { doc: number; score: number } | undefined;
      for (const doc of touched) {
        const entry = { doc, score: (scores[doc] as number) * (matched[doc] as number) ** ranking.coordination };
        scores[doc] = 0;
        matched[doc] = 0;
        if (doc === pinned) pinnedEntry = entry;
        else offer(entry);
      }
      if (pinned !== undefined) pinnedEntry ??= { doc: pinned, score: 0 };
      const hits = pinnedEntry === undefined ? top : [pinnedEntry, ...top].slice(0, limit);
      return hits.map(({ doc, score }) => {
        const s = segmentOf(offsets, doc);
        return { name: nameOf(doc), server: (segments[s] as ServerSegment).server, score };
      });
    },
  };
}

/**
 * Index terms (over every segment) that start with `prefix`, the term itself excluded: the first
 * {@link MAX_PREFIX_EXPANSIONS} in code-unit order, each with the segments it occurs in. Each
 * segment is asked through its table of terms by their first characters, so a lookup costs a
 * map read per segment plus the few terms sharing those characters.
 */
function prefixMatches(segments: readonly ServerSegment[], prefix: string): Array<{ segments: number[]; ids: number[] }> {
  const found = new Map<string, { segments: number[]; ids: number[] }>();
  const key = prefix.slice(0, PREFIX_KEY_LENGTH);
  segments.forEach((segment, s) => {
    const candidates = segment.prefixes.get(key);
    if (candidates === undefined) return;
    for (const id of candidates) {
      const term = segment.terms[id] as string;
      if (term === prefix || !term.startsWith(prefix)) continue;
      let where = found.get(term);
      if (where === undefined) found.set(term, (where = { segments: [], ids: [] }));
      where.segments.push(s);
      where.ids.push(id);
    }
  });
  return [...found.keys()]
    .sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
    .slice(0, MAX_PREFIX_EXPANSIONS)
    .map((term) => found.get(term) as { segments: number[]; ids: number[] });
}

/** The document whose exposed name is `lower` (case aside), among the scored segments; the first wins. */
function exactName(segments: readonly ServerSegment[], offsets: Int32Array, scored: readonly number[], lower: string): number | undefined {
  for (const s of scored) {
    const local = (segments[s] as ServerSegment).byLowerName.get(lower);
    if (local !== undefined) return (offsets[s] as number) + local;
  }
  return undefined;
}

/** The segment holding global document `doc` (binary search on the offsets). */
function segmentOf(offsets: Int32Array, doc: number): number {
  let lo = 0;
  let hi = offsets.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((offsets[mid] as number) <= doc) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
