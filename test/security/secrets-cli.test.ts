/**
 * Secrets never appear in what the `portcullis` executable prints (DESIGN.md §3 "Configuration
 * diagnostics … never echo a command, URL or header value"): `check` on configurations that hold
 * secrets and are wrong in every layer (schema, semantics, policy, JSON itself), a start refused
 * for a missing token variable or a required upstream that is down, and a full run at
 * PORTCULLIS_LOG_LEVEL=trace (the CLI's own `gatewayLogger` wiring) with a careless stdio child,
 * bad tokens and a session. Nothing on stdout or stderr may carry a secret in any form.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  Cleanup,
  initializeBody,
  killPids,
  MARKER_VAR,
  MCP_POST_HEADERS,
  newMarker,
  processesWithMarker,
  rawRequest,
  spawnCli,
  waitUntil,
  type CliProcess,
} from '../integration/harness.js';
import { findLeaks, LEAKY_STDIO_JS, newSecret } from './leaks.js';

const SECRETS = {
  header: newSecret('headers.X-Api-Key', 'xak/'),
  envHeader: newSecret('envHeaders.Authorization', 'eh+'),
  bearer: newSecret('auth bearer token', 'bt-'),
  stdio: newSecret('stdio env API_TOKEN', 'p@ss"w\\ord:'),
};
const ALL = Object.values(SECRETS);
const ENV = { SEC_UPSTREAM_AUTH: `Bearer ${SECRETS.envHeader.value}`, SEC_CLIENT_TOKEN: SECRETS.bearer.value };
const READY = /^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;

const perFile = new Cleanup();
const perTest = new Cleanup();
const marker = newMarker();
let dir: string;
let downUrl: string;

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-secrets-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  perFile.add(() => killPids(processesWithMarker(marker)));
  // A loopback port nothing listens on (bound, then released).
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  downUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/mcp`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

let count = 0;
/** Writes `content` (an object as JSON, or text as is) to a fresh config file. */
function writeConfig(content: Record<string, unknown> | string): string {
  const path = join(dir, `config-${++count}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, ...content }));
  return path;
}

const secretHttp = (extra: Record<string, unknown> = {}) => ({
  transport: 'streamableHttp',
  url: downUrl,
  allowPrivateNetwork: true,
  headers: { 'X-Api-Key': SECRETS.header.value },
  envHeaders: { Authorization: 'SEC_UPSTREAM_AUTH' },
  ...extra,
});
const leakyStdio = (extra: Record<string, unknown> = {}) => ({
  transport: 'stdio',
  command: process.execPath,
  args: [LEAKY_STDIO_JS],
  env: { [MARKER_VAR]: marker, API_TOKEN: SECRETS.stdio.value },
  ...extra,
});
const bearerAuth = (env = 'SEC_CLIENT_TOKEN') => ({ kind: 'bearer', tokens: [{ principal: 'alice', env }] });

/** What the CLI printed, as sources for `findLeaks`. */
const printed = (cli: CliProcess) => [['stdout', cli.stdout()] as const, ['stderr', cli.stderr()] as const];

const BAD_CONFIGS: Array<[string, Record<string, unknown> | string]> = [
  [
    'schema errors next to secrets (a token inline, a bad URL, a bad header, a bad mode)',
    {
      auth: { kind: 'bearer', tokens: [{ principal: 'alice', env: 'SEC_CLIENT_TOKEN', token: SECRETS.bearer.value }] },
      servers: {
        api: secretHttp({
          url: `ftp://127.0.0.1/mcp?key=${SECRETS.header.value}`,
          headers: { 'X-Api-Key': SECRETS.header.value, 'Bad Header': SECRETS.header.value, 'X-Split': `a\r\n${SECRETS.header.value}` },
        }),
        tool: leakyStdio({ mode: SECRETS.stdio.value }),
        both: { command: SECRETS.stdio.value, url: `https://example.invalid/?k=${SECRETS.header.value}` },
      },
    },
  ],
  [
    'semantic and policy errors next to secrets (NUL in a header, a denied variable, a forbidden child env)',
    {
      servers: {
        api: secretHttp({
          headers: { 'X-Api-Key': SECRETS.header.value, 'X-Nul': `a\u0000${SECRETS.header.value}` },
          envHeaders: { Authorization: 'SEC_UPSTREAM_AUTH', 'X-Cloud': 'AWS_SECRET_ACCESS_KEY', 'X-Bad': 'not a name' },
        }),
        tool: leakyStdio({ env: { API_TOKEN: SECRETS.stdio.value, LD_PRELOAD: SECRETS.stdio.value, NODE_OPTIONS: `--require ${SECRETS.stdio.value}` } }),
      },
    },
  ],
  ['a file that is not JSON', `{"servers":{"api":{"headers":{"X-Api-Key":"${SECRETS.header.value}"}}, "x": ${SECRETS.bearer.value}`],
];

describe('portcullis check', () => {
  it.each(BAD_CONFIGS)('lists the problems of %s without echoing a secret', async (_, content) => {
    const cli = spawnCli(perTest, ['check', '--config', writeConfig(content)], ENV);
    expect((await cli.exited()).code).toBe(1);
    expect(cli.stderr()).toMatch(/problem\(s\) in the configuration/);
    expect(findLeaks(printed(cli), ALL)).toEqual([]);
  });

  it('accepts a valid configuration holding secrets without printing them', async () => {
    const config = { auth: bearerAuth(), servers: { api: secretHttp({ mode: 'optional' }), tool: leakyStdio() } };
    const cli = spawnCli(perTest, ['check', '--config', writeConfig(config)], ENV);
    expect((await cli.exited()).code).toBe(0);
    expect(findLeaks(printed(cli), ALL)).toEqual([]);
  });
});

describe('portcullis refusing to start', () => {
  it('names a missing token variable, and no secret', async () => {
    const config = { auth: bearerAuth('SEC_TOKEN_NOT_SET'), servers: { api: secretHttp({ mode: 'optional' }), tool: leakyStdio() } };
    const cli = spawnCli(perTest, ['--config', writeConfig(config)], { ...ENV, PORTCULLIS_LOG_LEVEL: 'trace' });
    expect((await cli.exited()).code).toBe(1);
    expect(cli.stderr()).toContain('SEC_TOKEN_NOT_SET');
    expect(findLeaks(printed(cli), ALL)).toEqual([]);
  });

  it('reports a required upstream that is down, at trace, without a secret', async () => {
    const config = { auth: bearerAuth(), servers: { api: secretHttp({ connectTimeoutMs: 2_000 }) } };
    const cli = spawnCli(perTest, ['--config', writeConfig(config)], { ...ENV, PORTCULLIS_LOG_LEVEL: 'trace' });
    expect((await cli.exited()).code).toBe(1);
    expect(cli.stderr()).toMatch(/api/);
    expect(findLeaks(printed(cli), ALL)).toEqual([]);
  });
});

describe('portcullis running at trace', () => {
  it('logs a careless child, bad tokens and a session without a secret', async () => {
    const config = { auth: bearerAuth(), servers: { api: secretHttp({ mode: 'optional' }), tool: leakyStdio() } };
    const cli = spawnCli(perTest, ['--config', writeConfig(config)], { ...ENV, PORTCULLIS_LOG_LEVEL: 'trace' });
    const url = await cli.waitForLine(READY);
    const post = (authorization?: string) =>
      rawRequest(url, { headers: { ...MCP_POST_HEADERS, ...(authorization ? { authorization } : {}) }, body: initializeBody() });
    const answers = [await post(), await post('Bearer wrong-token-0123456789'), await post(`Bearer ${SECRETS.envHeader.value}`)];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401]);
    const session = await post(`Bearer ${SECRETS.bearer.value}`);
    expect(session.status).toBe(200);
    answers.push(session);
    await waitUntil(() => cli.stderr().includes('API_TOKEN=[redacted]'), 'the child stderr line logged');
    cli.child.kill('SIGTERM');
    expect((await cli.exited()).code).toBe(0);
    expect(cli.stderr()).toContain('request refused');
    const responses = answers.map((a, i) => [`response ${i}`, `${JSON.stringify(a.headers)}\n${a.body}`] as const);
    expect(findLeaks([...printed(cli), ...responses], ALL)).toEqual([]);
  });
});
