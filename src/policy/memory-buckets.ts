/**
 * Token buckets in this process's memory, one {@link KeyedRateLimiter} per rate (bounded in keys
 * by it): what a single gateway uses; replicas share theirs in Redis (`cluster/redis-buckets.ts`).
 */
import { capacityOf, type BucketStore, type RateSpec } from './request-limits.js';
import { KeyedRateLimiter } from './token-bucket.js';

export function memoryBuckets(options: { maxKeys?: number; now?: () => number } = {}): BucketStore {
  const limiters = new Map<string, KeyedRateLimiter>();
  const now = options.now ?? Date.now;
  return {
    take(key: string, spec: RateSpec) {
      const burst = capacityOf(spec);
      const id = `${spec.perMinute}/${burst}`;
      let limiter = limiters.get(id);
      if (limiter === undefined) {
        limiter = new KeyedRateLimiter({ perMinute: spec.perMinute, burst, maxKeys: options.maxKeys ?? 10_000 });
        limiters.set(id, limiter);
      }
      return Promise.resolve(limiter.take(key, now()));
    },
  };
}
