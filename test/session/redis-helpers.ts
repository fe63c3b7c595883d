/**
 * Redis for the event store tests: the shared server on 127.0.0.1:6379 (never stopped here; every
 * test run writes under its own key prefix and deletes it), and private `redis-server` processes
 * on free loopback ports for tests that stop and restart Redis. Processes are stopped by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { createClient } from 'redis';
import { createLogger, type Logger } from '../../src/observability/logger.js';

export const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';

/** A key prefix no other test run uses. */
export function uniquePrefix(): string {
  return `portcullis-test:${randomUUID()}:`;
}

function testClient(url: string) {
  return createClient({ url, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
}

/** Runs `use` with a short-lived client of `url` (127.0.0.1 only). */
export async function withRedis<T>(url: string, use: (client: ReturnType<typeof testClient>) => Promise<T>): Promise<T> {
  if (new URL(url).hostname !== '127.0.0.1') throw new Error('tests only talk to Redis on 127.0.0.1');
  const client = testClient(url);
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    client.destroy();
  }
}

/** Fails with the fix when the shared Redis does not answer. */
export async function assertSharedRedis(): Promise<void> {
  try {
    await withRedis(SHARED_REDIS_URL, (client) => client.ping());
  } catch {
    throw new Error('no Redis answers on 127.0.0.1:6379: start one (`.ci/run` shows how) to run the redis event store tests');
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

/** A free TCP port on 127.0.0.1 (bound and released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A private redis-server on 127.0.0.1; `stop()` and `start()` again on the same port. */
export interface PrivateRedis {
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function privateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const stop = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGKILL');
    await exited;
  };

  const start = async () => {
    if (child !== undefined) return;
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    child.once('error', () => undefined);
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await withRedis(url, (client) => client.ping());
        return;
      } catch {
        if (Date.now() > deadline) {
          await stop();
          throw new Error('hang guard: private redis-server did not answer within 10 s');
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };

  await start();
  return { url, start, stop };
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
