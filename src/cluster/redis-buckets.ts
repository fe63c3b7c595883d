/**
 * Token buckets in Redis, so replicas share one principal's limits (the policy's `rateLimits`):
 * one hash per bucket (`tokens`, `at`), refilled and spent by one Lua script, atomically, on
 * Redis's own clock (replicas' clocks never disagree about a refill). A bucket expires once it
 * would have refilled completely — an absent bucket is a full one — so Redis holds only buckets
 * in use. Keys hash the bucket name: principal names never appear in Redis.
 *
 * When Redis cannot answer, the request is admitted and the trouble logged (once per outage):
 * a limit must not turn a Redis hiccup into an outage of every MCP call.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import { capacityOf, type BucketStore, type RateSpec } from '../policy/request-limits.js';
import type { ClusterRedis } from './cluster-redis.js';
import type { ClusterKeys } from './cluster-keys.js';

const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local capacity = tonumber(ARGV[1])
local perMs = tonumber(ARGV[2])
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or capacity
local at = tonumber(bucket[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * perMs)
local ok = 0
local retry = 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
else
  retry = math.ceil((1 - tokens) / perMs)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / perMs) + 1000)
return { ok, retry }
`;

export function redisBuckets(client: ClusterRedis, keys: ClusterKeys, logger: Logger): BucketStore {
  let failing = false;
  return {
    async take(key: string, spec: RateSpec) {
      const capacity = capacityOf(spec);
      const digest = createHash('sha256').update(`${spec.perMinute}/${capacity}\u0000${key}`).digest('base64url');
      try {
        const [ok, retry] = (await client.eval(TAKE, { keys: [keys.rate(digest)], arguments: [String(capacity), String(spec.perMinute / 60_000)] })) as [number, number];
        if (failing) logger.info('rate limits: redis reachable again');
        failing = false;
        return ok === 1 ? { ok: true } : { ok: false, retryAfterMs: retry };
      } catch (error) {
        if (!failing) logger.warn({ err: (error as Error).name }, 'rate limits: redis unavailable; requests admitted unlimited until it answers');
        failing = true;
        return { ok: true };
      }
    },
  };
}
