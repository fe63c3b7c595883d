/**
 * The ranking parameters of tool search: BM25F field weights and constants, how much matching
 * more of the query's terms counts, and when and how much prefix matches count. All of them are
 * applied when a query is scored, so changing them rebuilds nothing.
 *
 * Chosen by cross-validation over two evaluation sets (bench/search/, method and figures in
 * docs/performance.md, "Search"): servers are split into folds; the parameters are tuned on the
 * other folds' servers and queries and measured on the held-out fold, so a weight that only
 * fits one catalogue shows up as a loss. Starting from a plain BM25 over all fields, an addition
 * is kept only if it wins there.
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
  /** Score factor of a prefix match relative to an exact one; 0 turns prefix matching off. */
  readonly prefixWeight: number;
}

export const DEFAULT_RANKING: RankingOptions = {
  weights: { name: 8, title: 4, description: 1, params: 0.25, server: 8, instructions: 0.3 },
  bm25: { k: 2, b: 0.75 },
  coordination: 0.5,
  prefixMinLength: 4,
  prefixWeight: 0.4,
};
