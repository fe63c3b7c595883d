/**
 * redis-server processes for tests: one on a free 127.0.0.1 port per `privateRedis()` call, stopped
 * by pid. No vitest import, so the global setup (test/setup/redis.ts) can use it too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createClient } from 'redis';

/** A client that gives up at once instead of reconnecting. */
export function testClient(url: string) {
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

/** What to do when `redis-server` is not on PATH. */
export const REDIS_MISSING =
  'redis-server is not installed (spawn ENOENT): the Redis tests start their own on a free 127.0.0.1 port; install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set PORTCULLIS_TEST_REDIS_URL to a Redis on 127.0.0.1';

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
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const spawned = child;
    // Ready when it says so on stdout (its log): the line comes once it listens.
    const ready = new Promise<void>((resolve, reject) => {
      let seen = '';
      const onData = (chunk: Buffer) => {
        seen = (seen + chunk.toString('utf8')).slice(-4_096);
        if (!seen.includes('Ready to accept connections')) return;
        spawned.stdout!.off('data', onData);
        spawned.stdout!.resume(); // keep the pipe drained from here on
        resolve();
      };
      spawned.stdout!.on('data', onData);
      spawned.once('error', (error: NodeJS.ErrnoException) =>
        reject(new Error(error.code === 'ENOENT' ? REDIS_MISSING : `redis-server could not start: ${error.message}`)),
      );
      spawned.once('exit', (code) => reject(new Error(`redis-server exited with code ${code} before answering on ${url}`)));
    });
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('hang guard: private redis-server did not answer within 10 s')), 10_000);
    });
    try {
      await Promise.race([ready, guard]);
    } catch (error) {
      // Stopped only if it runs: one that never spawned (ENOENT) or already exited has no exit to wait for.
      if (spawned.pid !== undefined && spawned.exitCode === null && spawned.signalCode === null) await stop();
      child = undefined;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };

  await start();
  return { url, start, stop };
}

