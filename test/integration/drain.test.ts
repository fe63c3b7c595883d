/**
 * Graceful drain on SIGTERM, on the `portcullis` executable as an operator runs it (a real child
 * process): a call in flight finishes after the signal, a new request meanwhile is refused with a
 * 503 and a JSON-RPC error, the session's answer to the call's elicitation still gets through,
 * open SSE streams are ended, children are reaped and the process exits 0. A call that outlives
 * the drain deadline has its stream ended and the process still exits 0.
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
  initializeBody,
  isFixture,
  killPids,
  MCP_POST_HEADERS,
  newMarker,
  openRawSession,
  processesWithMarker,
  rawRequest,
  spawnCli,
  stdioServer,
  textOf,
  waitUntil,
  type CliProcess,
} from './harness.js';
import { openRawSse } from './harness/raw-sse.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-drain-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());


let configCount = 0;
/** Starts the CLI over one marked stdio fixture; returns it, its URL and the marker. */
async function startCli(extra: Record<string, unknown> = {}): Promise<{ cli: CliProcess; url: string; marker: string }> {
  const marker = newMarker();
  perTest.add(() => killPids(processesWithMarker(marker)));
  const path = join(dir, `config-${++configCount}.json`);
  writeFileSync(path, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, servers: { local: stdioServer(marker) }, ...extra }));
  const cli = spawnCli(perTest, ['--config', path], { PORTCULLIS_LOG_LEVEL: 'info' });
  const url = await cli.waitForLine(READY_LINE);
  return { cli, url, marker };
}

/** Resolves once the gateway logged `message` (its logs are JSON lines on stderr). */
function logged(cli: CliProcess, message: string): Promise<true> {
  return waitUntil(() => (cli.stderr().includes(`"msg":"${message}`) ? true : undefined), `log line "${message}"`);
}

describe('SIGTERM while a 2025 session’s call is in flight', () => {
  it('lets the call finish, refuses new requests with 503 -32001, reaps every child and exits 0', async () => {
    const { cli, url, marker } = await startCli();
    let asked!: () => void;
    const elicited = new Promise<void>((resolve) => (asked = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const { client } = await connectClient(perTest, url, '2025', {
      capabilities: { elicitation: { form: {} } },
      setup: (c) =>
        c.setRequestHandler('elicitation/create', async () => {
          asked();
          await answered; // held until the test has seen the drain refuse a new request
          return { action: 'accept', content: { ok: true } };
        }),
    });
    const children = descendantsOf(cli.child.pid!).filter(isFixture).map((p) => p.pid);
    const call = client.callTool({ name: 'local__test_streaming_elicitation', arguments: {} });
    await elicited; // the call is in flight, waiting on this client
    const sessionChildren = descendantsOf(cli.child.pid!).filter(isFixture).map((p) => p.pid);
    expect(sessionChildren.length).toBeGreaterThan(children.length);

    cli.child.kill('SIGTERM');
    await logged(cli, 'draining');

    // A new client is refused at once, with a JSON-RPC error saying why and when to retry.
    const fresh = await rawRequest(url, { headers: { ...MCP_POST_HEADERS }, body: initializeBody(7) });
    expect(fresh.status).toBe(503);
    expect(fresh.headers['retry-after']).toBe('1');
    expect(fresh.json().error).toMatchObject({ code: -32001, data: { code: 'SHUTTING_DOWN' } });
    // So is a new request in the session whose call is still running.
    await expect(client.listTools()).rejects.toThrow(/503|shutting down/i);

    answer(); // the session's answer to the elicitation still reaches the call
    expect(textOf(await call)).toContain('action=accept');

    expect(await cli.exited()).toEqual({ code: 0, signal: null });
    expect(cli.stderr()).toContain('drained: every call in flight finished');
    expect(processesWithMarker(marker)).toEqual([]);
    for (const pid of sessionChildren) expect(descendantsOf(cli.child.pid!).some((p) => p.pid === pid)).toBe(false);
  });

  it('ends an open standalone SSE stream (so its client resumes elsewhere) and still exits 0', async () => {
    const { cli, url, marker } = await startCli();
    const session = await openRawSession(url);
    const stream = await openRawSse(url, { 'mcp-session-id': session.id, 'mcp-protocol-version': '2025-11-25' });
    expect(stream.status).toBe(200);

    cli.child.kill('SIGTERM');
    await waitUntil(() => (stream.ended() ? true : undefined), 'the standalone stream ending');
    expect(await cli.exited()).toEqual({ code: 0, signal: null });
    expect(cli.stderr()).toMatch(/"streamsEnded":1/);
    expect(processesWithMarker(marker)).toEqual([]);
  });
});

describe('SIGTERM while a 2026-era call is in flight', () => {
  it('lets the call finish, ends the client’s subscriptions/listen stream, and exits 0', async () => {
    const { cli, url, marker } = await startCli();
    const { client } = await connectClient(perTest, url, '2026');
    const subscription = await client.listen({ toolsListChanged: true });
    perTest.add(() => subscription.close().catch(() => undefined));
    let progressed!: () => void;
    const running = new Promise<void>((resolve) => (progressed = resolve));
    const call = client.callTool({ name: 'local__slow', arguments: { ms: 1500, steps: 15 } }, { onprogress: () => progressed() });
    await running;

    cli.child.kill('SIGTERM');
    expect(textOf(await call)).toBe('slept 1500ms');
    expect(await cli.exited()).toEqual({ code: 0, signal: null });
    expect(cli.stderr()).toContain('drained: every call in flight finished');
    expect(cli.stderr()).toMatch(/"streamsEnded":[1-9]/);
    expect(processesWithMarker(marker)).toEqual([]);
  });
});

describe('a call that outlives the drain deadline', () => {
  it('has its stream ended when the deadline passes; the gateway reaps its children and exits 0', async () => {
    const { cli, url, marker } = await startCli({ lifecycle: { drainTimeoutMs: 200 } });
    const { client } = await connectClient(perTest, url, '2025');
    let progressed!: () => void;
    const running = new Promise<void>((resolve) => (progressed = resolve));
    // Never awaited to its end: the gateway exits long before the 60 s pass.
    void client.callTool({ name: 'local__slow', arguments: { ms: 60_000, steps: 600 } }, { onprogress: () => progressed() }).catch(() => undefined);
    await running;

    cli.child.kill('SIGTERM');
    expect(await cli.exited()).toEqual({ code: 0, signal: null });
    expect(cli.stderr()).toContain('drain deadline passed');
    expect(cli.stderr()).toMatch(/"unfinished":1/);
    expect(processesWithMarker(marker)).toEqual([]);
  });
});
