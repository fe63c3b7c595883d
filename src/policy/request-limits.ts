/**
 * Request rate limits per principal (the policy's `rateLimits`): a token bucket of every MCP
 * request a principal sends, and one per principal × tool for `tools/call`. The buckets live in
 * a {@link BucketStore} — this process's memory, or Redis when replicas share the limits — and
 * this module decides only which buckets a request spends from and what a refusal says.
 *
 * Keys are built from the principal and catalogue names only (a tool name the catalogue does not
 * list spends from the principal's bucket alone), so a client cannot grow the key set with names
 * of its own. Without authentication every caller is one anonymous principal: the limits are then
 * the gateway's total.
 */
import { GatewayError } from '../errors.js';
import type { RateDecision } from './token-bucket.js';

export interface RateSpec {
  perMinute: number;
  burst?: number | undefined;
}

export interface RateLimitsPolicy {
  requests?: RateSpec | undefined;
  toolCalls?: RateSpec | undefined;
}

/** A rate's bucket size: its `burst`, else one minute's worth (at least one request). */
export function capacityOf(spec: RateSpec): number {
  return spec.burst ?? Math.max(1, Math.ceil(spec.perMinute));
}

/** Where buckets live: spend one token of `key` under `spec`. */
export interface BucketStore {
  take(key: string, spec: RateSpec): Promise<RateDecision>;
  close?(): Promise<void>;
}

/** What one request spends from: its principal's `requests` bucket. */
export interface LimitedRequest {
  principal: string | undefined;
  /** The JSON-RPC method, or `GET <route>` for the gateway's plain HTTP routes. */
  method: string;
}

/** What one tool call spends from: the principal × tool `toolCalls` bucket. */
export interface LimitedToolCall {
  principal: string | undefined;
  /** The exposed name of a tool the caller's catalogue lists (never a name the client made up). */
  tool: string;
}

export interface RequestLimiter {
  /**
   * Spends one request of the principal, once per request at the entrance (inbound/entrance.ts),
   * whatever answers it. Throws `RATE_LIMITED` (with `retryAfterMs`) when its bucket is empty.
   */
  admit(request: LimitedRequest): Promise<void>;
  /**
   * Spends one call of a tool, where the tool is resolved (routing/router.ts; `call_tool` spends
   * its inner tool's). Throws `RATE_LIMITED` when that bucket is empty.
   */
  admitTool(call: LimitedToolCall): Promise<void>;
}

const ANONYMOUS = '\u0000anonymous';

function refuse(what: string, spec: RateSpec, retryAfterMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GatewayError('RATE_LIMITED', `rate limit reached: ${what} is limited to ${spec.perMinute} a minute; retry in ${seconds} s`, {
    retryAfterMs,
    data: { retryAfterMs, limit: { perMinute: spec.perMinute, burst: capacityOf(spec) } },
  });
}

/** The limiter of a policy's `rateLimits`, or undefined when it sets none. */
export function compileRequestLimiter(policy: RateLimitsPolicy, store: BucketStore): RequestLimiter | undefined {
  const { requests, toolCalls } = policy;
  if (requests === undefined && toolCalls === undefined) return undefined;
  return {
    async admit({ principal }) {
      if (requests === undefined) return;
      const decision = await store.take(`requests\u0000${principal ?? ANONYMOUS}`, requests);
      if (!decision.ok) throw refuse('every request of this principal', requests, decision.retryAfterMs);
    },
    async admitTool({ principal, tool }) {
      if (toolCalls === undefined) return;
      const decision = await store.take(`tool\u0000${principal ?? ANONYMOUS}\u0000${tool}`, toolCalls);
      if (!decision.ok) throw refuse(`calling ${tool}`, toolCalls, decision.retryAfterMs);
    },
  };
}
