/**
 * Vitest global setup: the suite's Redis. Starts one private redis-server on a free 127.0.0.1
 * port for the whole run (stopped by pid at teardown), so `npm test` never depends on a Redis
 * someone else runs on 6379. `PORTCULLIS_TEST_REDIS_URL` (127.0.0.1 only) uses an existing one
 * instead. Without redis-server the run goes on and the Redis tests fail saying what to install.
 */
import type { TestProject } from 'vitest/node';
import { privateRedis, withRedis } from '../session/redis-process.js';

export interface SuiteRedis {
  /** Where the suite's Redis answers; absent when none could be had. */
  url?: string;
  /** Why there is none, with the fix. */
  problem?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    redis: SuiteRedis;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env['PORTCULLIS_TEST_REDIS_URL'];
  if (given !== undefined && given !== '') {
    try {
      await withRedis(given, (client) => client.ping());
      project.provide('redis', { url: given });
    } catch (error) {
      project.provide('redis', { problem: `PORTCULLIS_TEST_REDIS_URL (${given.replace(/\/\/[^@/]*@/, '//***@')}) does not answer: ${(error as Error).message}` });
    }
    return async () => undefined;
  }
  try {
    const redis = await privateRedis();
    project.provide('redis', { url: redis.url });
    return () => redis.stop();
  } catch (error) {
    project.provide('redis', { problem: (error as Error).message });
    return async () => undefined;
  }
}
