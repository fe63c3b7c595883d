/**
 * The `portcullis` executable as an operator runs it (`node dist/src/main.js`, a real child
 * process): `check` verdicts and exit codes, the Ready line, a required upstream that cannot
 * start, an optional one that is down, and SIGTERM draining without leaving a child behind.
 * Diagnostics name servers and fields, never a command or a URL (DESIGN.md §3).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  READY_LINE,
  Cleanup,
  connectClient,
  descendantsOf,
  isFixture,
  killPids,
  newMarker,
  processesWithMarker,
  rawRequest,
  spawnCli,
  stdioServer,
  textOf,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-cli-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const SECRET = 's3cr3t-do-not-echo';
const MISSING_COMMAND = `/nonexistent/${SECRET}/bin/mcp-server`;

let configCount = 0;
/** Writes a config file listening on 127.0.0.1 port 0 and returns its path. */
function writeConfig(config: Record<string, unknown>): string {
  const path = join(dir, `config-${++configCount}.json`);
  writeFileSync(path, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, ...config }));
  return path;
}

/** A fresh marker whose stdio fixtures are SIGKILLed after the test, should any survive. */
function trackedMarker(): string {
  const marker = newMarker();
  perTest.add(() => killPids(processesWithMarker(marker)));
  return marker;
}

describe('portcullis check', () => {
  it('exits 0 on a valid configuration', async () => {
    const path = writeConfig({ servers: { local: stdioServer(newMarker()) } });
    const cli = spawnCli(perTest, ['check', '--config', path]);
    expect((await cli.exited()).code).toBe(0);
    expect(cli.stdout()).toContain('configuration ok: 1 server(s)');
  });

  it('exits 1 listing every problem by server and field, without echoing commands or URLs', async () => {
    const path = writeConfig({
      servers: {
        both: { command: `/opt/${SECRET}/run`, url: `https://mcp.example.com/${SECRET}` },
        plain: { transport: 'streamableHttp', url: `http://mcp.example.com/mcp?token=${SECRET}` },
        pigeon: { transport: 'carrier-pigeon', command: `/usr/bin/${SECRET}` },
      },
    });
    const cli = spawnCli(perTest, ['check', '--config', path]);
    expect((await cli.exited()).code).toBe(1);
    const stderr = cli.stderr();
    expect(stderr).toMatch(/\d+ problem\(s\) in the configuration/);
    for (const server of ['servers.both', 'servers.plain.url', 'servers.pigeon']) expect(stderr).toContain(server);
    expect(stderr + cli.stdout()).not.toContain(SECRET);
    expect(cli.stdout()).not.toContain('configuration ok');
  });
});

describe('portcullis --config', () => {
  it('exits 1 without a Ready line when a required stdio server cannot start, naming that server only', async () => {
    const marker = trackedMarker();
    const path = writeConfig({
      servers: {
        healthy: stdioServer(marker),
        broken: { transport: 'stdio', command: MISSING_COMMAND, args: [`--token=${SECRET}`] },
      },
    });
    const cli = spawnCli(perTest, ['--config', path]);
    expect((await cli.exited()).code).toBe(1);
    expect(cli.stdout()).not.toContain('[portcullis]:Ready');
    const message = cli.stderr().split('\n').filter((line) => line.startsWith('portcullis:') || line.startsWith('  - '));
    expect(message.join('\n')).toMatch(/broken/);
    expect(message.join('\n')).not.toMatch(/healthy/);
    expect(cli.stderr()).not.toContain(SECRET);
    // The healthy server's child was started, then reaped when startup failed.
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('prints Ready with an optional server down, and /readyz shows that server not ready', async () => {
    const path = writeConfig({
      servers: {
        healthy: stdioServer(trackedMarker()),
        flaky: { transport: 'stdio', command: MISSING_COMMAND, mode: 'optional' },
      },
    });
    const cli = spawnCli(perTest, ['--config', path]);
    const url = await cli.waitForLine(READY_LINE);
    const readyz = await rawRequest(new URL('/readyz', url).href, { method: 'GET' });
    const body = readyz.json() as unknown as { status: string; servers: Array<{ server: string; mode: string; state: string }> };
    expect(body.servers).toEqual(
      expect.arrayContaining([
        { server: 'healthy', mode: 'required', state: 'ready' },
        expect.objectContaining({ server: 'flaky', mode: 'optional' }),
      ]),
    );
    expect(body.servers.find((s) => s.server === 'flaky')?.state).not.toBe('ready');
    // Readiness follows the required servers only.
    expect(readyz.status).toBe(200);
    expect(body.status).toBe('ready');
    cli.child.kill('SIGTERM');
    expect((await cli.exited()).code).toBe(0);
  });

  it('serves clients after Ready, and on SIGTERM exits 0 leaving no child behind', async () => {
    const marker = trackedMarker();
    const path = writeConfig({ servers: { local: stdioServer(marker) } });
    const cli = spawnCli(perTest, ['--config', path]);
    const url = await cli.waitForLine(READY_LINE);

    const { client } = await connectClient(perTest, url, '2025');
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'via cli' } }))).toBe('via cli');
    const children = descendantsOf(cli.child.pid!).filter(isFixture);
    expect(children.length).toBeGreaterThanOrEqual(2); // the primary and the session's own child

    cli.child.kill('SIGTERM');
    expect(await cli.exited()).toEqual({ code: 0, signal: null });
    expect(processesWithMarker(marker)).toEqual([]);
  });
});
