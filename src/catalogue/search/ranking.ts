/**
 * The ranking parameters of tool search: BM25F field weights and constants, how much matching
 * more of the query's terms counts, and when and how much prefix and fuzzy matches count. Tuned
 * on the tuning half of the benchmark's query set (bench/search/, method and figures in
 * docs/performance.md, "Search"); the held-out half is reported separately so the figure is not
 * flattered by the tuning.
 */
import type { Field } from './tool-document.js';

export interface RankingOptions {
  /** BM25F weight of each field: a term occurrence in the name counts `name` times one in the description. */
  readonly weights: Readonly<Record<Field, number>>;
  /** BM25F term-frequency saturation `k` and length normalisation `b` (one `b` for every field). */
  readonly bm25: { readonly k: number; readonly b: number };
  /** A tool's score is multiplied by (query terms it matches) to this power. */
  readonly coordination: number;
  /** Query terms at least this long also match index terms they are a prefix of. */
  readonly prefixMinLength: number;
  /** Query terms at least this long also match index terms one edit away. */
  readonly fuzzyMinLength: number;
  /** Score factor of a prefix match, and of a fuzzy match, relative to an exact one. */
  readonly prefixWeight: number;
  readonly fuzzyWeight: number;
}

export const DEFAULT_RANKING: RankingOptions = {
  weights: { name: 8, title: 4, description: 1, params: 0.25, server: 8, instructions: 0.1 },
  bm25: { k: 2.2, b: 0.7 },
  coordination: 0.5,
  prefixMinLength: 4,
  fuzzyMinLength: 6,
  prefixWeight: 0.4,
  fuzzyWeight: 0.3,
};
