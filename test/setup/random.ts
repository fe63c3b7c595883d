/**
 * Seeded randomness for test data: every stream derives from the run's seed (test/setup/seed.ts,
 * printed at the start of the run and beside each failure) and a name of its own, so a failure
 * replays with `TEST_SEED=<n>` and adding a stream in one file does not shift another's draws.
 * Random choices that shape a test (cut points, hang-up moments, sizes, made-up names) come from
 * here; `randomUUID()` stays fine for markers that only need to be unique.
 */
import { createHash } from 'node:crypto';
import { inject } from 'vitest';

export interface SeededRandom {
  /** The run's seed, for failure messages. */
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, maxExclusive) (`crypto.randomInt`'s range); `int(n)` is [0, n). */
  int(minOrMax: number, maxExclusive?: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** `length` random bytes. */
  bytes(length: number): Buffer;
}

/** A stream named `name` (unique within the file; a file's path is a good prefix) drawn from `seed`. */
export function seededRandom(name: string, seed: number = inject('testSeed')): SeededRandom {
  let state = createHash('sha256').update(`${seed}:${name}`).digest().readUInt32LE(0);
  // mulberry32: small, fast, and good enough to spread test inputs.
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (minOrMax: number, maxExclusive?: number): number => {
    const [min, max] = maxExclusive === undefined ? [0, minOrMax] : [minOrMax, maxExclusive];
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max <= min) throw new RangeError(`int(${min}, ${max}): need integers with min < max`);
    return min + Math.floor(next() * (max - min));
  };
  return {
    seed,
    next,
    int,
    chance: (p) => next() < p,
    bytes: (length) => Buffer.from(Array.from({ length }, () => int(256))),
  };
}
