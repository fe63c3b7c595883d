/**
 * A 2025 session's own stdio child (`isolation: "session"`) is spawned on the session's first use
 * of that server, not on `initialize`: sessions that only initialise, list and set a log level
 * cost no process, and their lists come from the server's primary connection until the session
 * has its own. Idle children are closed on their own timer while the session lives on, and
 * spawned again on next use; the number alive per server is capped gateway-wide, a session past
 * the cap getting a clear JSON-RPC error naming the server. Children are counted in /proc by the
 * marker in their environment.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WATCHED_URI } from '../fixtures/fixture-resources-prompts.js';
import {
  assertBuilt,
  Cleanup,
  connectClient,
  errorOf,
  isAlive,
  killPids,
  newMarker,
  processesWithMarker,
  sideChannelUrl,
  startTestGateway,
  stdioServer,
  textOf,
  waitUntil,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();

beforeAll(() => assertBuilt());
afterEach(() => perTest.run());
afterAll(() => perFile.run());

/** A gateway over one stdio fixture `stdio`; `children()` lists every live fixture process it started. */
async function gatewayWithChildren(sessions: Record<string, unknown> = {}) {
  const marker = newMarker();
  perTest.add(() => killPids(processesWithMarker(marker)));
  const gateway = await startTestGateway(perTest, { stdio: stdioServer(marker, { isolation: 'session' }) }, { sessions });
  const primary = processesWithMarker(marker);
  expect(primary).toHaveLength(1);
  /** Processes beyond the primary: the sessions' own children. */
  const sessionChildren = () => processesWithMarker(marker).filter((pid) => !primary.includes(pid));
  return { gateway, sessionChildren };
}

const toolNames = async (client: { listTools(): Promise<{ tools: Array<{ name: string }> }> }) =>
  (await client.listTools()).tools.map((tool) => tool.name);

describe('a session’s own stdio child', () => {
  it('is not spawned by sessions that only initialise, list and set a log level', async () => {
    const { gateway, sessionChildren } = await gatewayWithChildren();
    for (let i = 0; i < 4; i++) {
      const { client } = await connectClient(perTest, gateway.url, '2025');
      expect(await toolNames(client)).toContain('stdio__echo');
      await client.listPrompts();
      await client.listResources();
      await client.setLoggingLevel('debug');
    }
    expect(sessionChildren()).toEqual([]);
  });

  it('is spawned by the session’s first call, exactly once, and serves its later calls', async () => {
    const { gateway, sessionChildren } = await gatewayWithChildren({ maxChildrenPerServer: 1 });
    const { client } = await connectClient(perTest, gateway.url, '2025');
    await connectClient(perTest, gateway.url, '2025');
    expect(sessionChildren()).toEqual([]);

    // Two first calls at once share one spawn (and one place of the server's cap of 1).
    const first = await Promise.all(['one', 'also one'].map((text) => client.callTool({ name: 'stdio__echo', arguments: { text } })));
    expect(first.map(textOf)).toEqual(['one', 'also one']);
    const spawned = sessionChildren();
    expect(spawned).toHaveLength(1);
    expect(textOf(await client.callTool({ name: 'stdio__echo', arguments: { text: 'two' } }))).toBe('two');
    expect(sessionChildren()).toEqual(spawned);
  });

  it('serves the session’s lists once it exists, so per-connection state shows to that session only', async () => {
    const { gateway, sessionChildren } = await gatewayWithChildren();
    const a = await connectClient(perTest, gateway.url, '2025');
    const b = await connectClient(perTest, gateway.url, '2025');
    await a.client.callTool({ name: 'stdio__toggle_tool', arguments: { enabled: true } });
    await waitUntil(async () => (await toolNames(a.client)).includes('stdio__toggled_tool'), 'the toggled tool in A’s list');
    expect(textOf(await a.client.callTool({ name: 'stdio__toggled_tool', arguments: {} }))).toBe('toggled tool ran');
    // B has no connection of its own: its list is the primary's, untouched by A.
    expect(await toolNames(b.client)).not.toContain('stdio__toggled_tool');
    expect(sessionChildren()).toHaveLength(1);
  });

  it('is closed after sessions.childIdleTimeoutMs idle, the session lives on, and its next call spawns a fresh one', async () => {
    const { gateway, sessionChildren } = await gatewayWithChildren({ childIdleTimeoutMs: 300 });
    const { client } = await connectClient(perTest, gateway.url, '2025');
    await client.callTool({ name: 'stdio__toggle_tool', arguments: { enabled: true } });
    const [first] = sessionChildren();
    expect(first).toBeDefined();

    await waitUntil(() => !isAlive(first!), 'the idle session child to be closed');
    expect(sessionChildren()).toEqual([]);
    // What that child remembered went with it: the session's lists are the primary's again.
    expect(await toolNames(client)).not.toContain('stdio__toggled_tool');

    expect(textOf(await client.callTool({ name: 'stdio__echo', arguments: { text: 'still here' } }))).toBe('still here');
    const second = sessionChildren();
    expect(second).toHaveLength(1);
    expect(second).not.toContain(first);
  });

  it('is kept past the idle timeout while the session holds a resource subscription on it', async () => {
    const { gateway, sessionChildren } = await gatewayWithChildren({ childIdleTimeoutMs: 200 });
    const { client } = await connectClient(perTest, gateway.url, '2025');
    const uri = WATCHED_URI;
    await client.subscribeResource({ uri });
    const [child] = sessionChildren();
    expect(child).toBeDefined();
    // The clock: another session's child, idle from later on with the same timeout. Once the
    // gateway has closed it, the subscribed child has been idle longer than the timeout.
    const later = await connectClient(perTest, gateway.url, '2025');
    await later.client.callTool({ name: 'stdio__echo', arguments: { text: 'then idle' } });
    const [clock] = sessionChildren().filter((pid) => pid !== child);
    expect(clock).toBeDefined();
    await waitUntil(() => !isAlive(clock!), 'the later idle session child to be closed');
    expect(sessionChildren()).toEqual([child]);

    await client.unsubscribeResource({ uri });
    await waitUntil(() => !isAlive(child!), 'the child to be closed once nothing holds it');
  });
});

describe('sessions.maxChildrenPerServer', () => {
  it('refuses a session past the cap with an error naming the server, across endpoints, until a place is free', async () => {
    const { gateway, sessionChildren } = await gatewayWithChildren({ maxChildrenPerServer: 2 });
    const a = await connectClient(perTest, gateway.url, '2025');
    const b = await connectClient(perTest, sideChannelUrl(gateway.url, 'stdio'), '2025');
    const c = await connectClient(perTest, gateway.url, '2025');
    await a.client.callTool({ name: 'stdio__echo', arguments: { text: 'a' } });
    await b.client.callTool({ name: 'echo', arguments: { text: 'b' } });
    expect(sessionChildren()).toHaveLength(2);

    const refused = await errorOf(c.client.callTool({ name: 'stdio__echo', arguments: { text: 'c' } }));
    expect(refused.code).toBe(-32001);
    expect(refused.message).toContain('upstream "stdio" is serving its limit of 2 session processes');
    expect(refused.data).toEqual({ code: 'SESSION_CHILD_LIMIT' });
    expect(sessionChildren()).toHaveLength(2);
    // Lists need no child of its own: C still sees the catalogue.
    expect(await toolNames(c.client)).toContain('stdio__echo');

    // A's place is free once its child has exited and the gateway has seen it go; C, retrying
    // as told, is then served (and refused with the same error until then).
    await a.transport.terminateSession();
    const served = await waitUntil(async () => {
      try {
        return textOf(await c.client.callTool({ name: 'stdio__echo', arguments: { text: 'c again' } }));
      } catch (error) {
        expect((error as { data?: unknown }).data).toEqual({ code: 'SESSION_CHILD_LIMIT' });
        return undefined;
      }
    }, 'C served once A’s place is free');
    expect(served).toBe('c again');
    expect(sessionChildren()).toHaveLength(2);
  });
});
