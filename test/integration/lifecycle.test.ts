/**
 * Upstream process lifecycle through a real gateway: a stdio upstream that dies mid-call costs
 * that call a JSON-RPC error (never a hang) and is restarted for the next one; ending a 2025
 * session with DELETE reaps the session's own child; closing the gateway reaps every child.
 * Children are found in /proc by the marker in their environment, so orphans count too.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ReadyProcess } from '../fixtures/spawn-until-ready.js';
import {
  assertBuilt,
  Cleanup,
  connectClient,
  ERAS,
  errorOf,
  fixtureDescendants,
  httpServer,
  isAlive,
  killPids,
  newMarker,
  openRawSession,
  processesWithMarker,
  startHttpFixture,
  startTestGateway,
  stdioServer,
  textOf,
  waitUntil,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let httpFixture: ReadyProcess;

beforeAll(async () => {
  assertBuilt();
  httpFixture = await startHttpFixture();
  perFile.add(() => httpFixture.stop());
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

/** A gateway fronting one stdio fixture (and optionally the HTTP one); its children carry `marker`. */
async function gatewayWithMarker(withHttp = false) {
  const marker = newMarker();
  // Registered first, so it runs after the gateway's close: SIGKILL anything a failed test left.
  perTest.add(() => killPids(processesWithMarker(marker)));
  // Each session's own child is what these tests reap: `session` isolation.
  const servers: Record<string, unknown> = { stdio: stdioServer(marker, { isolation: 'session' }) };
  if (withHttp) servers.http = httpServer(httpFixture.match, { isolation: 'session' });
  const gateway = await startTestGateway(perTest, servers);
  return { gateway, marker, children: () => processesWithMarker(marker) };
}

/** The one pid in `after` that is not in `before`. */
function onlyNew(before: readonly number[], after: readonly number[]): number {
  const added = after.filter((pid) => !before.includes(pid));
  expect(added).toHaveLength(1);
  return added[0]!;
}

describe.each(ERAS)('a stdio upstream that dies during a %s client’s call', (era) => {
  it('costs that call a JSON-RPC upstream-unavailable error, and the next call runs on a restarted child', async () => {
    const { gateway } = await gatewayWithMarker();
    const { client } = await connectClient(perTest, gateway.url, era);
    expect(textOf(await client.callTool({ name: 'stdio__echo', arguments: { text: 'before' } }))).toBe('before');

    const error = await errorOf(client.callTool({ name: 'stdio__crash', arguments: {} }));
    expect(error.code).toBe(-32001);
    expect(error.message).toContain('"stdio"');

    expect(textOf(await client.callTool({ name: 'stdio__echo', arguments: { text: 'after' } }))).toBe('after');
  });
});

describe('a stdio child killed by pid during a 2025 client’s call', () => {
  it('fails the in-flight call with a JSON-RPC error, and a fresh child serves the next call', async () => {
    const { gateway, children } = await gatewayWithMarker();
    const before = children();
    const { client } = await connectClient(perTest, gateway.url, '2025');
    await client.callTool({ name: 'stdio__echo', arguments: { text: 'warm' } });
    const sessionChild = onlyNew(before, children());

    let progressed!: () => void;
    const running = new Promise<void>((resolve) => (progressed = resolve));
    const call = client.callTool({ name: 'stdio__slow', arguments: { ms: 60_000, steps: 600 } }, { onprogress: () => progressed() });
    await running;
    process.kill(sessionChild, 'SIGKILL');

    const error = await errorOf(call);
    expect(error.code).toBe(-32001);
    expect(textOf(await client.callTool({ name: 'stdio__echo', arguments: { text: 'again' } }))).toBe('again');
    expect(isAlive(sessionChild)).toBe(false);
    expect(children().filter((pid) => !before.includes(pid))).toHaveLength(1);
  });
});

describe('ending a 2025 session with DELETE', () => {
  it('reaps the stdio child the session started, and only that one', async () => {
    const { gateway, children } = await gatewayWithMarker();
    const before = children();
    expect(before).toHaveLength(1); // the server's primary connection

    const { client, transport } = await connectClient(perTest, gateway.url, '2025');
    await client.callTool({ name: 'stdio__echo', arguments: { text: 'hello' } });
    const sessionChild = onlyNew(before, children());

    await transport.terminateSession();
    await waitUntil(() => !isAlive(sessionChild), 'the session’s child exiting');
    expect(children()).toEqual(before);
  });

  it('makes the session id unknown afterwards (404)', async () => {
    const { gateway } = await gatewayWithMarker();
    const session = await openRawSession(gateway.url);
    expect((await session.delete()).status).toBe(200);
    const after = await session.post({ id: 2, method: 'tools/list', params: {} });
    expect(after.status).toBe(404);
    expect(after.json().error?.code).toBe(-32600);
  });
});

describe('closing the gateway', () => {
  it('leaves no stdio child behind, whichever client era started it', async () => {
    const { gateway, children } = await gatewayWithMarker(true);
    const legacy = await connectClient(perTest, gateway.url, '2025');
    const modern = await connectClient(perTest, gateway.url, '2026');
    await legacy.client.callTool({ name: 'stdio__echo', arguments: { text: '2025' } });
    await modern.client.callTool({ name: 'stdio__echo', arguments: { text: '2026' } });
    await legacy.client.callTool({ name: 'http__echo', arguments: { text: '2025' } });
    // The primary, the 2025 session's own child and a pooled child for the 2026 call.
    expect(children().length).toBeGreaterThanOrEqual(3);

    await gateway.close();
    expect(children()).toEqual([]);
    // Nothing below this test process runs the fixture but the HTTP one this file started.
    expect(fixtureDescendants().filter((pid) => pid !== httpFixture.pid)).toEqual([]);
  });
});
