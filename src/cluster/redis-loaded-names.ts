/**
 * The tools 2026-era callers loaded, in Redis, so every replica lists a caller's loads the same
 * (naming/loaded-names.ts says what is kept and why). One list per caller key, oldest name first:
 * one Lua script adds the names not yet there, trims the list to its bound from the oldest end and
 * renews the idle expiry, atomically, so two replicas loading for one caller at once cannot
 * overshoot the bound. Keys are the surface's hash of the caller: principal names never appear in
 * Redis.
 *
 * When Redis cannot answer, a list shows no loaded tools (logged once per outage) and a load is
 * refused with `CLUSTER_UNAVAILABLE`, naming what to do instead: losing a load silently would
 * leave the caller looking for tools its list does not show.
 */
import { GatewayError } from '../errors.js';
import { loadOutcome, type LoadedNamesStore } from '../naming/loaded-names.js';
import type { Logger } from '../observability/logger.js';
import type { ClusterKeys } from './cluster-keys.js';
import type { ClusterRedis } from './cluster-redis.js';

/** A caller's loads are forgotten this long after its last load. */
export const LOADED_NAMES_IDLE_MS = 24 * 60 * 60_000;

const LOAD = `
local added = {}
for i = 3, #ARGV do
  if not redis.call('LPOS', KEYS[1], ARGV[i]) then
    redis.call('RPUSH', KEYS[1], ARGV[i])
    added[#added + 1] = ARGV[i]
  end
end
local removed = {}
local over = redis.call('LLEN', KEYS[1]) - tonumber(ARGV[1])
if over > 0 then
  removed = redis.call('LRANGE', KEYS[1], 0, over - 1)
  redis.call('LTRIM', KEYS[1], over, -1)
end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return { added, removed }
`;

export function redisLoadedNames(client: ClusterRedis, keys: ClusterKeys, logger: Logger, idleMs = LOADED_NAMES_IDLE_MS): LoadedNamesStore {
  let failing = false;
  const failed = (error: unknown) => {
    if (!failing) logger.warn({ err: (error as Error).name }, 'loaded tools: redis unavailable; 2026 callers see no loaded tools and cannot load until it answers');
    failing = true;
  };
  const answered = () => {
    if (failing) logger.info('loaded tools: redis reachable again');
    failing = false;
  };
  return {
    async names(key) {
      try {
        const names = await client.lRange(keys.loaded(key), 0, -1);
        answered();
        return names;
      } catch (error) {
        failed(error);
        return [];
      }
    },
    async load(key, names, max) {
      if (!Number.isInteger(max) || max < 1) throw new TypeError('loaded names: max must be a positive integer');
      if (names.length === 0) return { loaded: [], dropped: [] };
      try {
        const [added, removed] = (await client.eval(LOAD, { keys: [keys.loaded(key)], arguments: [String(max), String(idleMs), ...names] })) as [string[], string[]];
        answered();
        return loadOutcome(added, removed);
      } catch (error) {
        failed(error);
        throw new GatewayError('CLUSTER_UNAVAILABLE', 'search_tools: the shared store of loaded tools is unavailable, so nothing was loaded; call the match with call_tool, or load again later', {
          retryAfterMs: 1_000,
        });
      }
    },
  };
}
