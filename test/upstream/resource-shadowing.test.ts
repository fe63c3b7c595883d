/**
 * Two servers listing the same resource URI (src/upstream/resource-shadowing.ts): the pure pairing,
 * and the warning a real gateway logs at start, with two compiled fixture servers over stdio
 * (`npx tsc -p tsconfig.json` first) that list the same `test://` resources.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { shadowedResources } from '../../src/upstream/resource-shadowing.js';
import { within } from '../integration/harness/wait.js';

const FIXTURE_JS = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist/test/fixtures/conformance-server.js');

describe('resources two servers both list', () => {
  it('pairs each later server with the earlier one that keeps the URI, once per pair', () => {
    const lists = [
      { server: 'a', resources: [{ uri: 'x://1' }, { uri: 'x://2' }] },
      { server: 'b', resources: [{ uri: 'x://1' }, { uri: 'x://3' }, { uri: 'x://2' }] },
      { server: 'c', resources: [{ uri: 'x://3' }, { uri: 'x://4' }, { uri: 'x://4' }] },
    ];
    expect(shadowedResources(lists)).toEqual([
      { kept: 'a', dropped: 'b', uris: ['x://1', 'x://2'] },
      { kept: 'b', dropped: 'c', uris: ['x://3'] },
    ]);
  });

  it('are logged at start, naming both servers and which one keeps them', async () => {
    if (!existsSync(FIXTURE_JS)) throw new Error(`${FIXTURE_JS} is missing: run \`npx tsc -p tsconfig.json\` first`);
    let seen!: (line: Record<string, unknown>) => void;
    const warned = new Promise<Record<string, unknown>>((resolve) => (seen = resolve));
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString('utf8').split('\n')) {
          if (text === '') continue;
          const line = JSON.parse(text) as Record<string, unknown>;
          if (typeof line.msg === 'string' && line.msg.startsWith('servers first and second list')) seen(line);
        }
        done();
      },
    });
    const fixture = { transport: 'stdio', command: process.execPath, args: [FIXTURE_JS, '--stdio'] };
    const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers: { first: fixture, second: fixture } });
    const gateway = await startGateway({ config, logger: createLogger({ destination }), env: { PATH: process.env.PATH ?? '' } });
    try {
      const line = await within(warned, 15_000, 'the shadowing warning');
      expect(line.level).toBe(40);
      expect(line.kept).toBe('first');
      expect(line.dropped).toBe('second');
      expect(line.uris).toContain('test://static-text');
      expect(line.msg).toMatch(/first \(configured first\) keeps them; second's are neither listed nor readable/);
    } finally {
      await within(gateway.close(), 15_000, 'gateway close');
    }
  });
});
