/**
 * Token buckets in this process's memory, one {@link KeyedRateLimiter} per rate (bounded in keys
 * by it): what a single gateway uses; replicas share theirs in Redis (`cluster/redis-buckets.ts`).
 */
import type { BucketStore, RateSpec } from './request-limits.js';
import { KeyedRateLimiter } from './token-bucket.js';

export function memoryBuckets(options: { maxKeys?: number; now?: () => number } = {}): BucketStore {
  const limiters = new Map<string, KeyedRateLimiter>();
  const now = options.now ?? Date.now;
  return {
    take(key: string, spec: RateSpec) {
      const id = `${spec.perMinute}/${spec.burst ?? spec.perMinute}`;
      let limiter = limiters.get(id);
      if (limiter === undefined) {
        limiter = new KeyedRateLimiter({ perMinute: spec.perMinute, burst: spec.burst ?? Math.max(1, Math.ceil(spec.perMinute)), maxKeys: options.maxKeys ?? 10_000 });
        limiters.set(id, limiter);
      }
      return Promise.resolve(limiter.take(key, now()));
    },
  };
}
