/**
 * Vitest global setup: the run's random seed. Every random choice a test makes (test/setup/random.ts,
 * and fast-check's, configured by test/setup/seeded.ts) derives from this one number, printed at
 * the start of the run and beside every failure, so a failing run can be replayed with
 * `TEST_SEED=<n> npx vitest run <file>`. Without `TEST_SEED`, a fresh seed per run.
 */
import { randomInt } from 'node:crypto';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    testSeed: number;
  }
}

/** The largest seed: seeds are unsigned 32-bit integers (what fast-check and mulberry32 take). */
const MAX_SEED = 2 ** 32 - 1;

/** `TEST_SEED` as a seed, a fresh one when unset; a malformed value is refused with the fix. */
export function runSeed(given: string | undefined, fresh: () => number = () => randomInt(MAX_SEED + 1)): number {
  if (given === undefined || given.trim() === '') return fresh();
  if (!/^\d+$/.test(given.trim()) || Number(given) > MAX_SEED) {
    throw new Error(`TEST_SEED=${JSON.stringify(given)} is not a seed: use the integer (0..${MAX_SEED}) a run printed as "TEST_SEED=<n>"`);
  }
  return Number(given);
}

export default function setup(project: TestProject): void {
  const seed = runSeed(process.env['TEST_SEED']);
  project.provide('testSeed', seed);
  console.log(`[seed] TEST_SEED=${seed} (set it to replay this run's random choices)`);
}
