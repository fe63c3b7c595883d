/**
 * The `redis` client (~9 MB of a default gateway's idle RSS) is loaded only by a gateway configured
 * for it: a default gateway, with the memory store and no cluster, never loads it. Checked in a fresh
 * `node` process running the compiled gateway, where every module it loaded is visible.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT } from '../integration/harness.js';
import { SHARED_REDIS_URL, uniquePrefix } from './redis-helpers.js';

const run = promisify(execFile);

/** Starts a gateway with `eventStore` in a new process; how many `redis` modules it loaded. */
async function redisModulesLoaded(eventStore: Record<string, unknown>): Promise<number> {
  const dist = (file: string) => pathToFileURL(`${ROOT}dist/src/${file}`).href;
  const script = `
    import { createRequire } from 'node:module';
    const { parseConfig } = await import(${JSON.stringify(dist('config/load.js'))});
    const { startGateway } = await import(${JSON.stringify(dist('gateway.js'))});
    const { silentLogger } = await import(${JSON.stringify(dist('observability/logger.js'))});
    const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers: {}, eventStore: ${JSON.stringify(eventStore)} });
    const gateway = await startGateway({ config, logger: silentLogger(), env: {} });
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => /[\\\\/]@?redis[\\\\/]/.test(file));
    await gateway.close();
    process.stdout.write(String(loaded.length));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000, env: { PATH: process.env.PATH } });
  return Number(stdout);
}

beforeAll(() => assertBuilt());

describe('loading the redis client on demand', () => {
  it('a gateway with the memory store never loads it', async () => {
    expect(await redisModulesLoaded({ kind: 'memory' })).toBe(0);
  });

  it('a gateway with the redis store loads it', async () => {
    expect(await redisModulesLoaded({ kind: 'redis', url: SHARED_REDIS_URL, keyPrefix: uniquePrefix(), allowPrivateNetwork: true })).toBeGreaterThan(0);
  });
});
