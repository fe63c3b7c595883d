/** Small, pure statistics for bench results: percentiles of raw samples, medians and spread. */

/** Nearest-rank percentile (0 < p ≤ 100) of already-sorted samples; NaN when empty. */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function median(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
}

/** (max − min) / median, as a fraction: how far apart the rounds were. */
export function spread(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite);
  if (finite.length < 2) return 0;
  const m = median(finite);
  return m === 0 ? 0 : (Math.max(...finite) - Math.min(...finite)) / m;
}
