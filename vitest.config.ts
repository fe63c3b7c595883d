import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One private redis-server for the run (test/setup/redis.ts); never a shared 6379.
    globalSetup: ['test/setup/redis.ts'],
  },
});
