/**
 * The suite's Redis is its own: a redis-server the vitest run started (its parent is the vitest
 * main process, the parent of this worker), bound to 127.0.0.1 on a port other than 6379, so
 * `npm test` never reads or writes a Redis that someone else runs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assertSharedRedis, privateRedis, SHARED_REDIS_URL, withRedis } from './redis-helpers.js';

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name: state, ppid, …
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe("the suite's Redis", () => {
  it.skipIf(process.env['PORTCULLIS_TEST_REDIS_URL'] !== undefined || process.platform !== 'linux')(
    'is a private redis-server started by this test run on a free loopback port',
    async () => {
      await assertSharedRedis();
      const url = new URL(SHARED_REDIS_URL);
      expect(url.hostname).toBe('127.0.0.1');
      expect(url.port).not.toBe('6379');
      const info = await withRedis(SHARED_REDIS_URL, (client) => client.info('server'));
      const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
      expect(Number.isInteger(pid) && pid > 0).toBe(true);
      expect(parentOf(pid)).toBe(process.ppid);
      const bind = await withRedis(SHARED_REDIS_URL, (client) => client.configGet('bind'));
      expect(bind['bind']).toBe('127.0.0.1');
    },
  );

  it('says what to install when redis-server is not on PATH', async () => {
    const path = process.env['PATH'];
    process.env['PATH'] = '/nonexistent';
    try {
      await expect(privateRedis()).rejects.toThrow(/redis-server is not installed \(spawn ENOENT\).*apt-get install redis-server/);
    } finally {
      process.env['PATH'] = path;
    }
  });
});
