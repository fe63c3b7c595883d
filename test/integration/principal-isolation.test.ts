/**
 * `isolation: "principal"`: one upstream connection per authenticated principal (and workspace),
 * shared by that principal's 2026-era requests and 2025-era sessions, never by two principals,
 * closed when idle. The upstream is the fixture over stdio, whose `toggle_tool` state and
 * `process_info` pid belong to one process: real child processes, bearer principals, SDK clients
 * of both eras.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { passThroughResult } from '../../demo/lib/pass-through-result.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  connectClient,
  errorOf,
  isAlive,
  newMarker,
  processesWithMarker,
  startGatewayFor,
  stdioServer,
  textOf,
  waitUntil,
  type Era,
} from './harness.js';

const cleanup = new Cleanup();
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());

const WORKSPACE = 'portcullis/workspace';

/** Calls a tool of the `notes` server with an optional workspace in `_meta`. */
async function call(client: Client, tool: string, args: Record<string, unknown> = {}, workspace?: string): Promise<string> {
  const params = { name: `fixture__${tool}`, arguments: args, ...(workspace === undefined ? {} : { _meta: { [WORKSPACE]: workspace } }) };
  const result = await client.request({ method: 'tools/call', params }, passThroughResult);
  return textOf(result);
}

const pidOf = async (client: Client, workspace?: string) => (JSON.parse(await call(client, 'process_info', {}, workspace)) as { pid: number }).pid;

async function gateway(marker: string, extra: Record<string, unknown> = {}) {
  const principals = bearerPrincipals('alice', 'bob');
  const running = await startGatewayFor(cleanup, principals, { fixture: stdioServer(marker, { isolation: 'principal' }) }, extra);
  const connect = (name: string, era: Era) => connectClient(cleanup, running.url, era, { headers: principals.headers(name) }).then((c) => c.client);
  return { running, connect };
}

describe('isolation "principal"', () => {
  it("keeps a stateful upstream's state across one principal's 2026-era calls and 2025-era session", async () => {
    const { connect } = await gateway(newMarker());
    const modern = await connect('alice', '2026');
    expect(await call(modern, 'toggle_tool', { enabled: true })).toBe('toggled_tool enabled');
    const legacy = await connect('alice', '2025');
    // The session reaches the same process: the tool the 2026 call added is there, and its state.
    expect((await legacy.listTools()).tools.map((t) => t.name)).toContain('fixture__toggled_tool');
    expect(await call(legacy, 'toggle_tool', { enabled: true })).toBe('toggled_tool already enabled');
    expect(await pidOf(legacy)).toBe(await pidOf(modern));
    expect(await call(modern, 'toggled_tool')).toBe('toggled tool ran');
  }, 60_000);

  it('never lets two principals share a connection, whatever workspace they name', async () => {
    const marker = newMarker();
    const { connect } = await gateway(marker);
    const [alice26, bob26, alice25, bob25] = await Promise.all([
      connect('alice', '2026'),
      connect('bob', '2026'),
      connect('alice', '2025'),
      connect('bob', '2025'),
    ]);
    expect(await call(alice26, 'toggle_tool', { enabled: true }, 'shared-name')).toBe('toggled_tool enabled');
    // Interleaved, concurrent, and naming the same workspace: each principal gets only its own process.
    const [a1, b1, a2, b2, bw] = await Promise.all([
      pidOf(alice26, 'shared-name'),
      pidOf(bob26, 'shared-name'),
      pidOf(alice25),
      pidOf(bob25),
      pidOf(bob26),
    ]);
    expect(new Set([a1, a2]).has(b1)).toBe(false);
    expect(new Set([a1, a2]).has(b2)).toBe(false);
    expect(new Set([a1, a2]).has(bw)).toBe(false);
    expect(b2).toBe(bw); // bob's session and bob's requests without a workspace share bob's process
    expect(await call(bob26, 'toggle_tool', { enabled: true }, 'shared-name')).toBe('toggled_tool enabled');
    expect((await bob25.listTools()).tools.map((t) => t.name)).not.toContain('fixture__toggled_tool');
  }, 60_000);

  it('closes an idle principal connection and its child, and opens a fresh one on next use', async () => {
    const marker = newMarker();
    const { connect } = await gateway(marker, { sessions: { childIdleTimeoutMs: 200 } });
    const primaryOnly = processesWithMarker(marker);
    const client = await connect('alice', '2026');
    const first = await pidOf(client);
    expect(primaryOnly).not.toContain(first);
    await waitUntil(() => !isAlive(first), 'the idle principal child to exit', 15_000);
    await waitUntil(() => processesWithMarker(marker).length === primaryOnly.length, 'only the primary to remain', 15_000);
    const second = await pidOf(client);
    expect(second).not.toBe(first);
  }, 60_000);

  it('keeps one principal inventing workspaces from taking every place, and refuses with -32001', async () => {
    const { connect } = await gateway(newMarker(), { sessions: { maxChildrenPerServer: 2 } });
    const alice = await connect('alice', '2026');
    const bob = await connect('bob', '2026');
    // A call in flight pins alice's first workspace; her share of two places is one.
    const slow = call(alice, 'slow', { ms: 3_000, steps: 3 }, 'w1');
    await waitUntil(async () => (await pidOf(alice, 'w1').catch(() => undefined)) !== undefined, "alice's first connection");
    const refused = await errorOf(call(alice, 'process_info', {}, 'w2'));
    expect(refused.code).toBe(-32001);
    expect(refused.data).toMatchObject({ code: 'PRINCIPAL_CONNECTION_LIMIT' });
    expect(refused.message).toContain('"fixture"');
    expect(await pidOf(bob)).toBeGreaterThan(0);
    expect(await slow).toBe('slept 3000ms');
  }, 60_000);

  it('refuses a workspace that is not a short string with 400 and -32602', async () => {
    const { connect } = await gateway(newMarker());
    const alice = await connect('alice', '2026');
    const params = { name: 'fixture__process_info', arguments: {}, _meta: { [WORKSPACE]: 'x'.repeat(300) } };
    const refused = await errorOf(alice.request({ method: 'tools/call', params }, passThroughResult));
    const answer = refused.data as { status: number; text: string };
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ error: { code: -32602, data: { code: 'INVALID_PARAMS' } } });
    expect(refused.message).toMatch(/portcullis\/workspace/);
  }, 60_000);
});
