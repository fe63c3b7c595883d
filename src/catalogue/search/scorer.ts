/**
 * Scores a query's terms against the postings and keeps the best `limit` tools: for each query
 * term the best of its exact, prefix and fuzzy matches per tool (so `list` expanding to `listing`
 * and `lists` counts once), summed over the query's terms, times the coordination factor. Ties
 * go to the earlier exposed name. Scratch arrays are allocated once per index; a search is
 * synchronous, so they are never shared by two searches at once.
 */
import type { Postings } from './postings.js';
import type { RankingOptions } from './ranking.js';
import { oneEditExpansions, prefixExpansions } from './term-expansion.js';

export interface ScoredDoc {
  readonly doc: number;
  readonly score: number;
}

export type Scorer = (terms: readonly string[], limit: number, keep: ((doc: number) => boolean) | undefined, pinned: number | undefined) => ScoredDoc[];

/** Terms made of letters and digits only: compound identifier terms are matched exactly. */
const PLAIN = /^[a-z0-9]+$/;

export function postingsScorer(postings: Postings, ranking: RankingOptions, nameRank: Int32Array): Scorer {
  const n = postings.documents;
  const scores = new Float64Array(n);
  const best = new Float64Array(n);
  const matched = new Uint8Array(n);
  const { k } = ranking.bm25;

  return function score(terms, limit, keep, pinned) {
    const touched: number[] = [];
    for (const term of terms) {
      const expansions: Array<[number, number]> = [];
      const exact = postings.termIds.get(term);
      if (exact !== undefined) expansions.push([exact, 1]);
      if (PLAIN.test(term)) {
        const seen = new Set(exact === undefined ? [] : [exact]);
        if (term.length >= ranking.prefixMinLength) {
          for (const id of prefixExpansions(postings, term)) if (!seen.has(id)) (seen.add(id), expansions.push([id, ranking.prefixWeight]));
        }
        // Light fuzzy matching: only a term the index does not have is taken for a typo.
        if (exact === undefined && term.length >= ranking.fuzzyMinLength) {
          for (const id of oneEditExpansions(postings, term)) if (!seen.has(id)) (seen.add(id), expansions.push([id, ranking.fuzzyWeight]));
        }
      }
      const termTouched: number[] = [];
      for (const [id, weight] of expansions) {
        const idf = (postings.idf[id] as number) * weight * (k + 1);
        const end = postings.starts[id + 1] as number;
        for (let p = postings.starts[id] as number; p < end; p += 1) {
          const doc = postings.docs[p] as number;
          if (keep !== undefined && !keep(doc)) continue;
          const tf = postings.tfs[p] as number;
          const s = (idf * tf) / (tf + k);
          const previous = best[doc] as number;
          if (previous === 0) termTouched.push(doc);
          if (s > previous) best[doc] = s;
        }
      }
      for (const doc of termTouched) {
        if (scores[doc] === 0) touched.push(doc);
        scores[doc] = (scores[doc] as number) + (best[doc] as number);
        matched[doc] = (matched[doc] as number) + 1;
        best[doc] = 0;
      }
    }

    const top: ScoredDoc[] = [];
    const better = (a: ScoredDoc, b: ScoredDoc) => a.score > b.score || (a.score === b.score && (nameRank[a.doc] as number) < (nameRank[b.doc] as number));
    const offer = (entry: ScoredDoc) => {
      if (top.length === limit && !better(entry, top[limit - 1] as ScoredDoc)) return;
      let at = top.length === limit ? limit - 1 : top.length;
      while (at > 0 && better(entry, top[at - 1] as ScoredDoc)) {
        top[at] = top[at - 1] as ScoredDoc;
        at -= 1;
      }
      top[at] = entry;
    };
    let pinnedEntry: ScoredDoc | undefined;
    for (const doc of touched) {
      const entry = { doc, score: (scores[doc] as number) * (matched[doc] as number) ** ranking.coordination };
      scores[doc] = 0;
      matched[doc] = 0;
      if (doc === pinned) pinnedEntry = entry;
      else offer(entry);
    }
    if (pinned === undefined) return top;
    if (pinnedEntry === undefined && (keep === undefined || keep(pinned))) pinnedEntry = { doc: pinned, score: 0 };
    return pinnedEntry === undefined ? top : [pinnedEntry, ...top].slice(0, limit);
  };
}
