/**
 * Redis for the event store tests. The suite's Redis is a private `redis-server` that the global
 * setup (test/setup/redis.ts) starts on a free 127.0.0.1 port and every test file shares (each run
 * writes under its own key prefix and deletes it); `PORTCULLIS_TEST_REDIS_URL` names another one
 * on 127.0.0.1 instead. Tests that stop and restart Redis start their own with `privateRedis()`.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { inject } from 'vitest';
import { createLogger, type Logger } from '../../src/observability/logger.js';
import type { SuiteRedis } from '../setup/redis.js';
import { withRedis } from './redis-process.js';

export { freePort, privateRedis, withRedis, type PrivateRedis } from './redis-process.js';

const suite: SuiteRedis = inject('redis');

/**
 * URL of the suite's Redis. When none could be started it names port 0, which refuses every
 * connection at once; `assertSharedRedis()` then says what to install.
 */
export const SHARED_REDIS_URL = suite.url ?? 'redis://127.0.0.1:0';

/** A key prefix no other test run uses. */
export function uniquePrefix(): string {
  return `portcullis-test:${randomUUID()}:`;
}

/** Fails with the fix when the suite's Redis is missing or does not answer. */
export async function assertSharedRedis(): Promise<void> {
  if (suite.url === undefined) throw new Error(suite.problem);
  try {
    await withRedis(SHARED_REDIS_URL, (client) => client.ping());
  } catch {
    throw new Error(`the suite's Redis (${SHARED_REDIS_URL}) does not answer`);
  }
}

/** Every key under `prefix` (SCAN, bounded). */
export async function keysUnder(url: string, prefix: string): Promise<string[]> {
  return withRedis(url, async (client) => {
    const keys: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      keys.push(...batch);
      if (keys.length > 100_000) break;
    }
    return keys;
  });
}

/** Deletes every key under `prefix`. */
export async function deleteKeysUnder(url: string, prefix: string): Promise<void> {
  const keys = await keysUnder(url, prefix);
  if (keys.length === 0) return;
  await withRedis(url, async (client) => {
    for (let i = 0; i < keys.length; i += 500) await client.del(keys.slice(i, i + 500));
  });
}

/** A logger whose lines (parsed) land in `lines`. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: createLogger({ level: 'debug', destination: destination as never }), lines };
}
