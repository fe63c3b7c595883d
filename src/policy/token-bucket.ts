/**
 * Rate limits as token buckets, one per caller: a caller may spend `burst` requests at once and
 * then `perMinute` a minute, refilled continuously. Used for `initialize` per principal, and
 * meant for any other per-caller rate a policy sets.
 *
 * The bucket map is bounded (`maxKeys`): a bucket that has refilled completely is the same as no
 * bucket and is dropped first, which loses nothing; only if every bucket is still partly spent
 * does the least recently used one go (that caller starts over with a full bucket). Time is
 * passed in, so the arithmetic is testable without clocks.
 */

export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

export interface RateLimitOptions {
  /** Requests a caller may make per minute, sustained. */
  perMinute: number;
  /** Requests a caller may make at once (bucket size); default `perMinute`. */
  burst?: number;
  /** Most callers tracked at once; default 10,000. */
  maxKeys?: number;
}

/** One bucket: `capacity` tokens, refilled at `refillPerMs`, one token per request. */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly capacity: number,
    private readonly refillPerMs: number,
    now: number,
  ) {
    this.tokens = capacity;
    this.updatedAt = now;
  }

  /** Spends one token, or says how long until one is available. */
  take(now: number): RateDecision {
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.ceil((1 - this.tokens) / this.refillPerMs) };
  }

  /** True when the bucket has refilled completely (indistinguishable from a new one). */
  full(now: number): boolean {
    this.refill(now);
    return this.tokens >= this.capacity;
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.updatedAt);
    this.tokens = Math.min(this.capacity, this.tokens + elapsed * this.refillPerMs);
    this.updatedAt = Math.max(this.updatedAt, now);
  }
}

/** A token bucket per key (a principal), bounded in the number of keys it tracks. */
export class KeyedRateLimiter {
  private readonly capacity: number;
  private readonly refillPerMs: number;
  private readonly maxKeys: number;
  /** Insertion order is recency order: a key is re-inserted on each use. */
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(options: RateLimitOptions) {
    const { perMinute, burst = perMinute, maxKeys = 10_000 } = options;
    if (!Number.isFinite(perMinute) || perMinute <= 0) throw new TypeError('perMinute must be a positive number');
    if (!Number.isInteger(burst) || burst < 1) throw new TypeError('burst must be a positive integer');
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new TypeError('maxKeys must be a positive integer');
    this.capacity = burst;
    this.refillPerMs = perMinute / 60_000;
    this.maxKeys = maxKeys;
  }

  /** Callers tracked right now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Spends one of `key`'s tokens, or says how long until it may try again. */
  take(key: string, now = Date.now()): RateDecision {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= this.maxKeys) this.makeRoom(now);
      bucket = new TokenBucket(this.capacity, this.refillPerMs, now);
    } else {
      this.buckets.delete(key);
    }
    this.buckets.set(key, bucket);
    return bucket.take(now);
  }

  private makeRoom(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.full(now)) this.buckets.delete(key);
    }
    if (this.buckets.size < this.maxKeys) return;
    const oldest = this.buckets.keys().next();
    if (oldest.done !== true) this.buckets.delete(oldest.value);
  }
}
