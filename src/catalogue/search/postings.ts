/**
 * The inverted index of a tool search index: for every term, the tools it occurs in with their
 * BM25F pseudo term frequency (Robertson & Zaragoza, "The Probabilistic Relevance Framework:
 * BM25 and Beyond", §3.3) — each field's count, normalised by that field's length against its
 * average and weighted by the field's weight, summed over the fields. The weights are fixed when
 * the index is built, so a search only adds `idf × tf / (k + tf)` per posting.
 *
 * Stored in typed arrays, one slice per term: 8 bytes per (term, tool) pair.
 */
import type { RankingOptions } from './ranking.js';
import { FIELDS, type ToolDocument } from './tool-document.js';
import { identifierRuns, termsOfIdentifier } from './tokenize.js';

export interface Postings {
  /** Number of documents. */
  readonly documents: number;
  /** Term → its id (index into `starts`). */
  readonly termIds: ReadonlyMap<string, number>;
  /** Every term, sorted (code-unit order), for prefix lookups. */
  readonly sortedTerms: readonly string[];
  /** Postings of term `t` are `docs[starts[t]] … docs[starts[t + 1] − 1]`, with `tfs` alongside. */
  readonly starts: Int32Array;
  readonly docs: Int32Array;
  readonly tfs: Float32Array;
  /** Inverse document frequency of each term. */
  readonly idf: Float64Array;
}

/**
 * Builds the postings of `documents`. Every identifier run is tokenised once per build (tool text
 * repeats a small vocabulary) straight into term ids; per-document counts live in scratch arrays
 * indexed by term id, so building allocates per term, not per (term, tool) pair.
 */
export function buildPostings(documents: readonly ToolDocument[], ranking: RankingOptions): Postings {
  const n = documents.length;
  const fieldCount = FIELDS.length;
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

  // Every tool of a server carries the same server name and instructions (and generated or
  // templated descriptions repeat): the runs of a text are looked up once per distinct text.
  const textParts = new Map<string, { parts: Int32Array[]; length: number }>();
  const partsOfText = (text: string) => {
    let entry = textParts.get(text);
    if (entry === undefined) {
      const parts = identifierRuns(text).map(idsOfRun);
      let length = 0;
      for (const part of parts) length += part.length;
      textParts.set(text, (entry = { parts, length }));
    }
    return entry;
  };

  // Pass 1: each field's term ids, and the field lengths.
  const fieldTerms: Array<{ parts: Int32Array[]; length: number }> = new Array(n * fieldCount);
  const lengths = new Float64Array(n * fieldCount);
  for (let d = 0; d < n; d += 1) {
    const doc = documents[d] as ToolDocument;
    for (let f = 0; f < fieldCount; f += 1) {
      const entry = partsOfText(doc[FIELDS[f] as (typeof FIELDS)[number]]);
      fieldTerms[d * fieldCount + f] = entry;
      lengths[d * fieldCount + f] = entry.length;
    }
  }
  const average = new Float64Array(fieldCount);
  for (let f = 0; f < fieldCount; f += 1) {
    let sum = 0;
    for (let d = 0; d < n; d += 1) sum += lengths[d * fieldCount + f] as number;
    average[f] = sum === 0 ? 1 : sum / n;
  }

  // Pass 2: per document, the BM25F pseudo frequency of each of its terms.
  const vocabulary = termIds.size;
  const seenIn = new Int32Array(vocabulary).fill(-1);
  const slot = new Int32Array(vocabulary);
  const df = new Int32Array(vocabulary);
  const pairTerm: number[] = [];
  const pairDoc: number[] = [];
  const pairTf: number[] = [];
  const { b } = ranking.bm25;
  for (let d = 0; d < n; d += 1) {
    for (let f = 0; f < fieldCount; f += 1) {
      const { parts, length } = fieldTerms[d * fieldCount + f] as { parts: Int32Array[]; length: number };
      if (length === 0) continue;
      const increment = ranking.weights[FIELDS[f] as (typeof FIELDS)[number]] / (1 - b + (b * length) / (average[f] as number));
      for (const ids of parts) for (const id of ids) {
        if (seenIn[id] !== d) {
          seenIn[id] = d;
          slot[id] = pairTerm.length;
          pairTerm.push(id);
          pairDoc.push(d);
          pairTf.push(0);
          df[id] = (df[id] as number) + 1;
        }
        const at = slot[id] as number;
        pairTf[at] = (pairTf[at] as number) + increment;
      }
    }
  }

  // Pass 3: the pairs, grouped by term (a counting sort; documents stay in order within a term).
  const starts = new Int32Array(vocabulary + 1);
  for (let t = 0; t < vocabulary; t += 1) starts[t + 1] = (starts[t] as number) + (df[t] as number);
  const docs = new Int32Array(pairTerm.length);
  const tfs = new Float32Array(pairTerm.length);
  const fill = starts.slice(0, vocabulary);
  for (let i = 0; i < pairTerm.length; i += 1) {
    const t = pairTerm[i] as number;
    const at = fill[t] as number;
    docs[at] = pairDoc[i] as number;
    tfs[at] = pairTf[i] as number;
    fill[t] = at + 1;
  }
  const idf = new Float64Array(vocabulary);
  for (let t = 0; t < vocabulary; t += 1) {
    const k = df[t] as number;
    idf[t] = Math.log(1 + (n - k + 0.5) / (k + 0.5));
  }
  const sortedTerms = [...termIds.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return { documents: n, termIds, sortedTerms, starts, docs, tfs, idf };
}
