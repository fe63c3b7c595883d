import { describe, expect, it } from 'vitest';
import { KeyedRateLimiter, TokenBucket } from '../../src/policy/token-bucket.js';

describe('TokenBucket', () => {
  it('allows a burst of its capacity, then says how long until the next token', () => {
    const bucket = new TokenBucket(3, 3 / 60_000, 0);
    expect([bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    // One token per 20 s at 3 a minute.
    expect(bucket.take(0)).toEqual({ ok: false, retryAfterMs: 20_000 });
    expect(bucket.take(15_000)).toEqual({ ok: false, retryAfterMs: 5_000 });
    expect(bucket.take(20_000)).toEqual({ ok: true });
  });

  it('refills to its capacity and no further, and ignores a clock that steps back', () => {
    const bucket = new TokenBucket(2, 2 / 60_000, 0);
    bucket.take(0);
    bucket.take(0);
    expect(bucket.full(10_000_000)).toBe(true);
    expect(bucket.take(10_000_000)).toEqual({ ok: true });
    expect(bucket.take(10_000_000)).toEqual({ ok: true });
    expect(bucket.take(5_000).ok).toBe(false);
  });
});

describe('KeyedRateLimiter', () => {
  it('keeps one bucket per key: one caller spending its burst leaves another untouched', () => {
    const limiter = new KeyedRateLimiter({ perMinute: 2 });
    expect(limiter.take('alice', 0).ok).toBe(true);
    expect(limiter.take('alice', 0).ok).toBe(true);
    expect(limiter.take('alice', 0)).toEqual({ ok: false, retryAfterMs: 30_000 });
    expect(limiter.take('bob', 0).ok).toBe(true);
    expect(limiter.take('alice', 30_000).ok).toBe(true);
  });

  it('takes a burst different from the rate', () => {
    const limiter = new KeyedRateLimiter({ perMinute: 60, burst: 1 });
    expect(limiter.take('k', 0).ok).toBe(true);
    expect(limiter.take('k', 0)).toEqual({ ok: false, retryAfterMs: 1_000 });
  });

  it('stays within maxKeys, dropping refilled buckets first so a spent caller is not forgiven', () => {
    const limiter = new KeyedRateLimiter({ perMinute: 60, burst: 2, maxKeys: 2 });
    limiter.take('spent', 0);
    limiter.take('spent', 0);
    limiter.take('idle', 0);
    // At 1 s 'idle' has refilled (2 of 2) while 'spent' has 1 of 2, and 'spent' is the least
    // recently used: the full bucket makes room, not the oldest one.
    expect(limiter.take('new', 1_000).ok).toBe(true);
    expect(limiter.size).toBe(2);
    expect(limiter.take('spent', 1_000).ok).toBe(true);
    expect(limiter.take('spent', 1_000).ok).toBe(false);
  });

  it('evicts the least recently used bucket when every bucket is partly spent', () => {
    const limiter = new KeyedRateLimiter({ perMinute: 1, maxKeys: 2 });
    limiter.take('a', 0);
    limiter.take('b', 0);
    limiter.take('a', 1);
    limiter.take('c', 2);
    expect(limiter.size).toBe(2);
    // 'b' was the least recently used and went; 'a' is still spent.
    expect(limiter.take('a', 3).ok).toBe(false);
    expect(limiter.take('b', 3).ok).toBe(true);
  });

  it.each([
    [{ perMinute: 0 }, /perMinute/],
    [{ perMinute: Number.NaN }, /perMinute/],
    [{ perMinute: 10, burst: 0 }, /burst/],
    [{ perMinute: 10, burst: 1.5 }, /burst/],
    [{ perMinute: 10, maxKeys: 0 }, /maxKeys/],
  ])('refuses option %j', (options, message) => {
    expect(() => new KeyedRateLimiter(options)).toThrow(message);
  });
});
