import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Suites that are not the everyday loop, each its own project so it can be run or skipped by
 * name (`npx vitest run --project core`), and run after `core` rather than beside it: `soak`
 * (bounded many-iteration loops: hang-ups, big answers, fuzzing), `browser` (a real headless
 * Chromium) and `scale` (the search benchmark's ~5,000-tool catalogue). `npm test` and CI run
 * every project; test/architecture/test-loop.test.ts checks each file lands in exactly one.
 */
export const SUITES = {
  soak: ['test/integration/pool-soak.test.ts', 'test/integration/history-soak.test.ts', 'test/inbound/fuzz-endpoint.test.ts', 'test/integration/many-sessions-soak.test.ts'],
  browser: ['test/admin/admin-page.test.ts', 'test/admin/admin-integrity-page.test.ts'],
  scale: ['test/catalogue/search/benchmark-catalogue.test.ts', 'test/integration/deferral.test.ts'],
} as const;

/** Options every project shares (projects do not inherit the root's `test` block). */
const common = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks' as const,
  // fast-check draws from the run's seed; a failing test prints the seed that replays it.
  setupFiles: ['test/setup/seeded.ts'],
};

export default defineConfig({
  test: {
    // Run once per run, before any project's first test: dist/ built from the current sources
    // (test/setup/build.ts), the run's random seed, printed (test/setup/seed.ts; TEST_SEED
    // replays one), then one private redis-server (test/setup/redis.ts; never a shared 6379).
    // Projects take the values they provide; none repeats them.
    globalSetup: ['test/setup/build.ts', 'test/setup/seed.ts', 'test/setup/redis.ts'],
    projects: [
      {
        test: {
          ...common,
          name: 'core',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...Object.values(SUITES).flat()],
        },
      },
      ...Object.entries(SUITES).map(([name, include]) => ({
        test: { ...common, name, include: [...include], sequence: { groupOrder: 1 } },
      })),
    ],
  },
});
