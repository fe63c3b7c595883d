/**
 * Who may open a 2025-era session now, for the whole gateway: one budget shared by every
 * endpoint (the aggregate and each per-server side channel) and by sessions a cluster replica
 * adopts, so `sessions.max` bounds the process, not each path. Three limits, in the order a
 * client meets them:
 *
 * 1. `initializePerMinute` per principal (token bucket): session churn — each `initialize`
 *    builds a server, a transport and an event history — is bounded whatever the caps are. The
 *    bucket lives in the same store as the policy's `rateLimits` (policy/request-limits.ts): this
 *    process's memory, or Redis when replicas are clustered, so a client alternating between
 *    replicas spends one bucket, not one per replica;
 * 2. `max` live sessions in the gateway;
 * 3. `maxPerPrincipal` live sessions per principal, so one authenticated caller cannot take every
 *    place (without authentication every client is the one anonymous principal).
 *
 * An admitted session holds a ticket until it closes; the place is taken from the moment of
 * admission (before the handshake runs), so concurrent `initialize` requests cannot overshoot a
 * cap. When a cap is reached, idle sessions past their timeout are expired first (every endpoint
 * registers how), so a dead client's session never blocks a live one.
 */
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { RefusalLog } from '../observability/refusal-log.js';
import { memoryBuckets } from '../policy/memory-buckets.js';
import type { BucketStore, RateSpec } from '../policy/request-limits.js';

export interface SessionAdmissionOptions {
  /** Live sessions in the whole gateway. */
  max: number;
  /** Live sessions one principal may hold. */
  maxPerPrincipal: number;
  /** `initialize` requests one principal may send per minute (and at once). */
  initializePerMinute: number;
  logger: Logger;
  /** Where the `initialize` buckets live (the gateway's rate-limit store); default: this process's memory. */
  buckets?: BucketStore;
}

/** A session's place in the budget; `release` is idempotent. */
export interface SessionTicket {
  release(): void;
}

export type Admission = { ok: true; ticket: SessionTicket } | { ok: false; error: GatewayError };

/** The bucket key of a principal; authentication never yields an empty principal. */
const keyOf = (principal: string | undefined) => principal ?? '';

/** The `initialize` bucket of a principal, apart from every `rateLimits` bucket (request-limits.ts keys). */
const initializeBucket = (principal: string | undefined) => `initialize\u0000${keyOf(principal)}`;

export class SessionAdmission {
  private readonly options: SessionAdmissionOptions;
  private readonly buckets: BucketStore;
  private readonly rate: RateSpec;
  private readonly refusals: RefusalLog;
  private readonly perPrincipal = new Map<string, number>();
  private readonly reclaimers = new Set<() => void>();
  private total = 0;

  constructor(options: SessionAdmissionOptions) {
    for (const key of ['max', 'maxPerPrincipal', 'initializePerMinute'] as const) {
      if (!Number.isInteger(options[key]) || options[key] < 1) throw new TypeError(`${key} must be a positive integer`);
    }
    this.options = options;
    this.buckets = options.buckets ?? memoryBuckets();
    this.rate = { perMinute: options.initializePerMinute };
    this.refusals = new RefusalLog(options.logger);
  }

  /** Live sessions admitted and not yet closed, gateway-wide. */
  get size(): number {
    return this.total;
  }

  /** Registers a way to expire idle sessions (an endpoint's registry); returns the unregister function. */
  addReclaimer(reclaim: () => void): () => void {
    this.reclaimers.add(reclaim);
    return () => this.reclaimers.delete(reclaim);
  }

  /**
   * A client's `initialize`: the principal's rate first, then the caps. The caps are taken after
   * the bucket answers, in one synchronous step, so concurrent requests still cannot overshoot them.
   */
  async admitInitialize(principal: string | undefined): Promise<Admission> {
    const rate = await this.buckets.take(initializeBucket(principal), this.rate);
    if (!rate.ok) {
      const seconds = Math.max(1, Math.ceil(rate.retryAfterMs / 1000));
      this.refusals.warn(
        'RATE_LIMITED',
        { principal, limit: this.options.initializePerMinute },
        'initialize refused: a principal exceeded sessions.initializePerMinute; a client is reconnecting in a loop, or the limit (policy limits.initializePerMinute) is too low',
      );
      return {
        ok: false,
        error: new GatewayError('RATE_LIMITED', `Too many initialize requests; retry after ${seconds} s`, { retryAfterMs: rate.retryAfterMs }),
      };
    }
    return this.admit(principal);
  }

  /** A session taken over from another replica: it counts like any other, but the client sent no `initialize`. */
  admitAdopted(principal: string | undefined): Admission {
    return this.admit(principal);
  }

  private admit(principal: string | undefined): Admission {
    const key = keyOf(principal);
    let refused = this.refusal(key);
    if (refused !== undefined) {
      for (const reclaim of this.reclaimers) reclaim();
      refused = this.refusal(key);
    }
    if (refused !== undefined) {
      this.logRefusal(refused, principal);
      return { ok: false, error: refused };
    }
    this.total += 1;
    this.perPrincipal.set(key, (this.perPrincipal.get(key) ?? 0) + 1);
    let released = false;
    return {
      ok: true,
      ticket: {
        release: () => {
          if (released) return;
          released = true;
          this.total -= 1;
          const held = (this.perPrincipal.get(key) ?? 1) - 1;
          if (held === 0) this.perPrincipal.delete(key);
          else this.perPrincipal.set(key, held);
        },
      },
    };
  }

  private refusal(key: string): GatewayError | undefined {
    if (this.total >= this.options.max) return new GatewayError('SESSION_LIMIT', 'Too many sessions; try again later');
    if ((this.perPrincipal.get(key) ?? 0) >= this.options.maxPerPrincipal) {
      return new GatewayError('PRINCIPAL_SESSION_LIMIT', 'Too many sessions for this principal; end one (DELETE) or try again later');
    }
    return undefined;
  }

  private logRefusal(error: GatewayError, principal: string | undefined): void {
    if (error.code === 'SESSION_LIMIT') {
      this.refusals.warn(
        'SESSION_LIMIT',
        { limit: this.options.max },
        'session refused: the gateway holds sessions.max live sessions; raise sessions.max (up to policy limits.maxSessions) or shorten sessions.idleTimeoutMs',
      );
      return;
    }
    this.refusals.warn(
      'PRINCIPAL_SESSION_LIMIT',
      { principal, limit: this.options.maxPerPrincipal },
      'session refused: a principal holds sessions.maxPerPrincipal live sessions; its client may not be ending sessions (DELETE), or the quota (policy limits.maxSessionsPerPrincipal) is too low',
    );
  }
}
