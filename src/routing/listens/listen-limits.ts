/**
 * The bounds on 2026 `subscriptions/listen` (resource-listens.ts, listens-2026.ts) and the one
 * refusal a listen past any of them gets: `SUBSCRIPTION_LIMIT`, naming whose bound it met.
 */
import { GatewayError } from '../../errors.js';

export const DEFAULT_MAX_URIS_PER_LISTEN = 64;
export const DEFAULT_MAX_URIS_TOTAL = 4096;

/** Whose bound a refused listen met, in the refusal's `data.limit`. */
export type ListenLimitScope = 'principal' | 'gateway';

/** SUBSCRIPTION_LIMIT for a listen past a bound of `scope` on `counts` (retry later: places come back as listens end). */
export function subscriptionLimit(scope: ListenLimitScope, counts: 'resourceSubscriptions' | 'listens', max: number): GatewayError {
  const whose = scope === 'principal' ? 'this principal holds' : 'the gateway holds';
  const what = counts === 'listens' ? 'listen streams' : 'resource subscriptions';
  return new GatewayError('SUBSCRIPTION_LIMIT', `too many ${what}: ${whose} the most allowed (${max}); end one or retry later`, {
    retryAfterMs: 5_000,
    data: { retryAfterMs: 5_000, limit: { scope, counts, max } },
  });
}
