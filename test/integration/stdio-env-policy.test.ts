/**
 * A stdio server under a policy with an env allowlist and a command allowlist, end to end: the
 * `portcullis` executable, a real child found by its marker, its environment read from /proc.
 * Only the listed names reach the child on top of the minimal inherited set; the gateway's own
 * environment (secrets, OpenSSL and XDG settings) never does; a bare command still runs, found
 * through the inherited PATH, which the config could not change.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { POSIX_INHERITED_ENV } from '../../src/upstream/child-env.js';
import { assertBuilt, READY_LINE, Cleanup, connectClient, FIXTURE_JS, killPids, MARKER_VAR, newMarker, processesWithMarker, spawnCli, waitUntil } from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-stdio-env-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());


function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter((entry) => entry !== '')
    .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)] as [string, string]);
  return new Map(entries);
}

describe('a stdio server under an env and command allowlist', () => {
  it('starts with only the listed names on top of the inherited set, and never the gateway\'s own environment', async () => {
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ stdioAllowedEnv: ['MYAPP_*', MARKER_VAR], stdioCommands: ['node'] }));
    const marker = newMarker();
    perTest.add(() => killPids(processesWithMarker(marker)));
    const config = join(dir, 'gateway.json');
    writeFileSync(
      config,
      JSON.stringify({
        policy: './policy.json',
        listen: { host: '127.0.0.1', port: 0 },
        servers: { fx: { transport: 'stdio', command: 'node', args: [FIXTURE_JS, '--stdio'], env: { MYAPP_MODE: 'on', [MARKER_VAR]: marker } } },
      }),
    );
    const gatewayEnv = {
      LANG: 'C.UTF-8',
      OPENSSL_CONF: join(dir, 'never-read.cnf'),
      XDG_CONFIG_HOME: join(dir, 'xdg'),
      PORTCULLIS_TEST_SECRET: 'gateway-only-value',
    };
    const cli = spawnCli(perTest, ['--config', config], gatewayEnv);
    const url = await cli.waitForLine(READY_LINE);

    const [pid] = await waitUntil(() => {
      const pids = processesWithMarker(marker);
      return pids.length > 0 && pids;
    }, 'the stdio child');
    const env = environOf(pid!);
    expect(env.get('MYAPP_MODE')).toBe('on');
    expect(env.get('PATH')).toBe(process.env.PATH);
    expect(env.get('LANG')).toBe('C.UTF-8');
    const permitted = new Set([...POSIX_INHERITED_ENV, 'MYAPP_MODE', MARKER_VAR]);
    expect([...env.keys()].filter((name) => !permitted.has(name))).toEqual([]);
    for (const name of Object.keys(gatewayEnv).filter((name) => name !== 'LANG')) expect(env.has(name), name).toBe(false);

    // And it serves: the bare `node` was found through the inherited PATH.
    const { client } = await connectClient(perTest, url, '2025');
    const tools = await client.listTools();
    expect(tools.tools.length).toBeGreaterThan(0);
  });
});
