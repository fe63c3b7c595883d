/**
 * Vitest setup file (every test file): fast-check draws from the run's seed (test/setup/seed.ts),
 * and a failing test prints the seed that replays it.
 */
import fc from 'fast-check';
import { afterEach, inject } from 'vitest';

const seed = inject('testSeed');
fc.configureGlobal({ seed });

afterEach(({ task }) => {
  if (task.result?.state === 'fail') console.error(`[seed] "${task.name}" failed with TEST_SEED=${seed}; rerun with it to replay the random choices`);
});
