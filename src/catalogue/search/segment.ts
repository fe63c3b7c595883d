/**
 * One server's part of a tool search index: the tokenised documents of that server's visible
 * tools, as postings that hold each field's raw term count. Nothing in a segment depends on other
 * servers or on the ranking's weights: the catalogue-wide statistics (document frequency, average
 * field lengths) and the field weights are applied when a query is scored (`tool-index.ts`). So a
 * segment is built once per distinct content of a server's list and then shared: by every index
 * a later snapshot builds (a `list_changed` from one server tokenises that server alone), by a
 * re-listing that returned the same tools (an upstream whose 2026 lists carry `ttlMs: 0`), and by
 * the sessions whose own connections list the same definitions (`segment-cache.ts`).
 *
 * Stored in typed arrays, one slice per term: 4 bytes of document id and 2 bytes per field for
 * each (term, tool) pair.
 */
import { createHash } from 'node:crypto';
import type { SearchableTool } from './snapshot.js';
import { FIELDS, type ToolDocument, toolDocument } from './tool-document.js';
import { identifierRuns, termsOfIdentifier } from './tokenize.js';

const FIELD_COUNT = FIELDS.length;
/** The fields that differ between a server's tools (the others are the server's name and instructions). */
const TOOL_FIELDS = FIELDS.filter((field) => field !== 'server' && field !== 'instructions');
/** Prefix matching looks up index terms by this many leading characters: the shortest query term it expands. */
export const PREFIX_KEY_LENGTH = 4;
/** Terms made of letters and digits only: compound identifier terms are never prefix-matched. */
const PLAIN = /^[a-z0-9]+$/;
/** A field's count of one term saturates here (field texts are capped, so it is never reached in practice). */
const MAX_COUNT = 0xffff;

export interface ServerSegment {
  readonly server: string;
  /** The server's instructions the documents carry. */
  readonly instructions: string | undefined;
  /** Content key: two segments with the same key hold the same documents. */
  readonly key: string;
  /** Exposed names, in the order given (a duplicate name is indexed once). */
  readonly names: readonly string[];
  /** Lower-cased exposed name → document, for a query that spells a name. */
  readonly byLowerName: ReadonlyMap<string, number>;
  /** Terms of each document per field: `fieldLengths[doc * FIELDS.length + field]`. */
  readonly fieldLengths: Uint32Array;
  /** Sum of `fieldLengths` per field, for the catalogue's average field lengths. */
  readonly fieldTotals: Float64Array;
  readonly termIds: ReadonlyMap<string, number>;
  /** Term of each id. */
  readonly terms: readonly string[];
  /** The first {@link PREFIX_KEY_LENGTH} characters of a plain term → the ids of the terms that start so, in code-unit order. */
  readonly prefixes: ReadonlyMap<string, Int32Array>;
  /** Postings of term `t`: `docs[starts[t]] … docs[starts[t + 1] − 1]`, each with FIELDS.length counts in `counts`. */
  readonly starts: Int32Array;
  readonly docs: Int32Array;
  readonly counts: Uint16Array;
  /** Approximate bytes held, for the cache's bound. */
  readonly bytes: number;
}

/** The field texts of one server's tools and the key of that content. */
export interface SegmentSource {
  readonly server: string;
  readonly instructions: string | undefined;
  readonly key: string;
  readonly names: readonly string[];
  readonly documents: readonly ToolDocument[];
}

/**
 * The documents of `server`'s tools and their content key: a hash of every field text the index
 * would read (so a definition that changes only outside them, an output schema say, keeps its
 * segment). Tools with a name already seen are left out.
 */
export function segmentSource(server: string, instructions: string | undefined, tools: readonly SearchableTool[]): SegmentSource {
  const hash = createHash('sha1');
  // Server name and instructions once: every document carries the same two.
  hash.update(server).update('\0').update(instructions ?? '').update('\0');
  const names: string[] = [];
  const documents: ToolDocument[] = [];
  const seen = new Set<string>();
  const serverInfo = instructions === undefined ? { name: server } : { name: server, instructions };
  for (const tool of tools) {
    const lower = tool.name.toLowerCase();
    if (seen.has(lower)) continue;
    seen.add(lower);
    const doc = toolDocument(tool, serverInfo);
    names.push(tool.name);
    documents.push(doc);
    hash.update(tool.name).update('\0');
    for (const field of TOOL_FIELDS) hash.update(doc[field]).update('\0');
  }
  return { server, instructions, key: hash.digest('base64url'), names, documents };
}

/**
 * Tokenises a source into its segment. Every identifier run is tokenised once per segment (a
 * server's tools repeat a small vocabulary and the same instructions), straight into term ids.
 */
export function buildSegment(source: SegmentSource): ServerSegment {
  const { documents } = source;
  const n = documents.length;
  const termIds = new Map<string, number>();
  const runIds = new Map<string, Int32Array>();
  const idsOfRun = (run: string): Int32Array => {
    let ids = runIds.get(run);
    if (ids === undefined) {
      const terms: string[] = [];
      termsOfIdentifier(run, terms);
      ids = Int32Array.from(terms, (term) => {
        let id = termIds.get(term);
        if (id === undefined) termIds.set(term, (id = termIds.size));
        return id;
      });
      runIds.set(run, ids);
    }
    return ids;
  };
  const textIds = new Map<string, Int32Array[]>();
  const idsOfText = (text: string): Int32Array[] => {
    let parts = textIds.get(text);
    if (parts === undefined) textIds.set(text, (parts = identifierRuns(text).map(idsOfRun)));
    return parts;
  };

  // Pass 1: per document, its (term, field) counts, as pairs in document order.
  const fieldLengths = new Uint32Array(n * FIELD_COUNT);
  const fieldTotals = new Float64Array(FIELD_COUNT);
  const pairTerm: number[] = [];
  const pairDoc: number[] = [];
  const pairCounts: number[] = [];
  let seenIn = new Int32Array(64).fill(-1);
  let slot = new Int32Array(64);
  for (let d = 0; d < n; d += 1) {
    const doc = documents[d] as ToolDocument;
    for (let f = 0; f < FIELD_COUNT; f += 1) {
      let length = 0;
      for (const ids of idsOfText(doc[FIELDS[f] as (typeof FIELDS)[number]])) {
        length += ids.length;
        for (const id of ids) {
          if (id >= seenIn.length) {
            const grownSeen = new Int32Array(Math.max(id + 1, seenIn.length * 2)).fill(-1);
            grownSeen.set(seenIn);
            seenIn = grownSeen;
            const grownSlot = new Int32Array(grownSeen.length);
            grownSlot.set(slot);
            slot = grownSlot;
          }
          if (seenIn[id] !== d) {
            seenIn[id] = d;
            slot[id] = pairTerm.length;
            pairTerm.push(id);
            pairDoc.push(d);
            for (let g = 0; g < FIELD_COUNT; g += 1) pairCounts.push(0);
          }
          const at = (slot[id] as number) * FIELD_COUNT + f;
          if ((pairCounts[at] as number) < MAX_COUNT) pairCounts[at] = (pairCounts[at] as number) + 1;
        }
      }
      fieldLengths[d * FIELD_COUNT + f] = length;
      fieldTotals[f] = (fieldTotals[f] as number) + length;
    }
  }

  // Pass 2: the pairs grouped by term (a counting sort; documents stay in order within a term).
  const vocabulary = termIds.size;
  const starts = new Int32Array(vocabulary + 1);
  for (const t of pairTerm) starts[t + 1] = (starts[t + 1] as number) + 1;
  for (let t = 0; t < vocabulary; t += 1) starts[t + 1] = (starts[t + 1] as number) + (starts[t] as number);
  const docs = new Int32Array(pairTerm.length);
  const counts = new Uint16Array(pairTerm.length * FIELD_COUNT);
  const fill = starts.slice(0, vocabulary);
  for (let i = 0; i < pairTerm.length; i += 1) {
    const t = pairTerm[i] as number;
    const at = fill[t] as number;
    docs[at] = pairDoc[i] as number;
    for (let f = 0; f < FIELD_COUNT; f += 1) counts[at * FIELD_COUNT + f] = pairCounts[i * FIELD_COUNT + f] as number;
    fill[t] = at + 1;
  }
  const terms = [...termIds.keys()];
  const grouped = new Map<string, number[]>();
  for (const [term, id] of termIds) {
    if (term.length < PREFIX_KEY_LENGTH || !PLAIN.test(term)) continue;
    const key = term.slice(0, PREFIX_KEY_LENGTH);
    let ids = grouped.get(key);
    if (ids === undefined) grouped.set(key, (ids = []));
    ids.push(id);
  }
  const byTerm = (x: number, y: number) => ((terms[x] as string) < (terms[y] as string) ? -1 : 1);
  const prefixes = new Map([...grouped].map(([key, ids]) => [key, Int32Array.from(ids.sort(byTerm))]));
  const byLowerName = new Map(source.names.map((name, doc) => [name.toLowerCase(), doc]));

  let stringBytes = 0;
  for (const term of terms) stringBytes += 2 * term.length + 96;
  for (const name of source.names) stringBytes += 4 * name.length + 96;
  const bytes = stringBytes + fieldLengths.byteLength + starts.byteLength + docs.byteLength + counts.byteLength;
  return { server: source.server, instructions: source.instructions, key: source.key, names: source.names, byLowerName, fieldLengths, fieldTotals, termIds, terms, prefixes, starts, docs, counts, bytes };
}
