/**
 * What a client may set at `initialize` (2026: per request) and what it may not, on a real
 * gateway over a real stdio upstream: the persona at the head of the instructions (the config's,
 * or the client's within the policy's bounds), `dataMode`, `eventStoreLimit` (never above the
 * config's), and every deploy-only field on the wire leaving the gateway's exposure unchanged;
 * bad values refused with -32602 naming the key, unknown keys ignored. Also the announced server:
 * the canonical URL in the handshake `_meta`, on /readyz.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { DEPLOY_ONLY_KEYS } from '../../src/rpc/init-options.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { connectClient, textOf } from '../integration/harness/clients.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { MCP_POST_HEADERS, rawRequest } from '../integration/harness/raw-http.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { Cleanup } from '../integration/harness/wait.js';
import { startPluginGateway } from '../customizations/plugin-test-gateway.js';
import { initialize2025, modern } from './handshake.js';

const gatewayLife = new Cleanup();
const perTest = new Cleanup();
afterEach(() => perTest.run());
afterAll(async () => {
  await gatewayLife.run();
  killAllStdioChildren();
});

const POLICY = { deniedTools: ['conf__test_error_handling'], agentPersona: { allowed: true, maxChars: 40 } };
const EVENT_LIMIT = 50;

let gateway: RunningGateway;
let forbidding: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const server = { conf: stdioServer(newMarker(), { isolation: 'shared' }) };
  gateway = (
    await startPluginGateway(
      gatewayLife,
      { servers: server, persona: 'You are Portcullis, terse and exact.', instructions: 'Operator notes.', eventStore: { limit: EVENT_LIMIT, streamAfterMs: 0 } },
      POLICY,
    )
  ).gateway;
  forbidding = (
    await startPluginGateway(gatewayLife, { servers: { conf: stdioServer(newMarker(), { isolation: 'shared' }) }, listen: { host: '127.0.0.1', port: 0, path: '/team/mcp', publicUrl: 'https://mcp.example.com' } }, {
      agentPersona: { allowed: false },
    })
  ).gateway;
}, 60_000);

describe('persona', () => {
  it("puts the config's persona, labelled, at the head of the aggregate instructions (both eras)", async () => {
    for (const era of ['2025', '2026'] as const) {
      const { client } = await connectClient(perTest, gateway.url, era);
      const instructions = client.getInstructions() ?? '';
      expect(instructions.startsWith('## Persona\nYou are Portcullis, terse and exact.\n\nOperator notes.\n\n## conf\n')).toBe(true);
    }
  });

  it("replaces it with the client's own persona, for that client only", async () => {
    const own = await initialize2025(perTest, gateway.url, { agentPersona: 'You are a pirate.' });
    expect(own.result?.instructions?.startsWith('## Persona\nYou are a pirate.\n\nOperator notes.')).toBe(true);
    const other = await initialize2025(perTest, gateway.url);
    expect(other.result?.instructions?.startsWith('## Persona\nYou are Portcullis')).toBe(true);
    const discovered = await modern(gateway.url, 'server/discover', {}, { agentPersona: 'You are a pirate.' });
    expect(discovered.result?.instructions?.startsWith('## Persona\nYou are a pirate.')).toBe(true);
  });

  it("refuses a persona longer than the policy's maxChars, naming agentPersona", async () => {
    const long = 'x'.repeat(41);
    const legacy = await initialize2025(perTest, gateway.url, { agentPersona: long });
    expect(legacy.response.status).toBe(400);
    expect(legacy.error).toMatchObject({ code: -32602, message: expect.stringContaining('agentPersona') });
    const refused = await modern(gateway.url, 'server/discover', {}, { agentPersona: long });
    expect(refused.error).toMatchObject({ code: -32602, message: expect.stringContaining('agentPersona') });
  });

  it('refuses any client persona where the policy forbids it', async () => {
    const legacy = await initialize2025(perTest, forbidding.url, { agentPersona: 'hi' });
    expect(legacy.error).toMatchObject({ code: -32602, message: expect.stringContaining("agentPersona is not allowed by this gateway's policy") });
    const refused = await modern(forbidding.url, 'tools/list', {}, { agentPersona: 'hi' });
    expect(refused.error).toMatchObject({ code: -32602, message: expect.stringContaining('agentPersona') });
  });
});

/** What a session sees: its tool names, prompt names, resource URIs and instructions. */
async function exposure(options?: unknown) {
  const session = await initialize2025(perTest, gateway.url, options);
  expect(session.response.status).toBe(200);
  const list = async (method: string, field: string, key: string) =>
    (((await session.post!({ method }))?.result as Record<string, Array<Record<string, string>>>)[field] ?? []).map((item) => item[key]).sort();
  return {
    instructions: session.result?.instructions,
    tools: await list('tools/list', 'tools', 'name'),
    prompts: await list('prompts/list', 'prompts', 'name'),
    resources: await list('resources/list', 'resources', 'uri'),
  };
}

const HOSTILE: Record<string, unknown> = {
  host: '0.0.0.0',
  port: 80,
  allowedHosts: ['evil.example'],
  allowedOrigins: ['https://evil.example'],
  acknowledgedNoAuth: true,
  deniedTools: [],
  privateNetwork: { allowServers: true },
  limits: { maxBodyBytes: 1_000_000_000 },
  legacySse: { inbound: true },
};

describe('deploy-only fields on the wire', () => {
  const keys = DEPLOY_ONLY_KEYS.filter((key) => key !== 'agentPersona'); // agentPersona is also a client option (tested above)

  it('covers the listener, the allowlists, the bind acknowledgement and every policy key', () => {
    expect(keys).toEqual(expect.arrayContaining(['host', 'port', 'allowedHosts', 'allowedOrigins', 'acknowledgedNoAuth', 'deniedTools', 'limits', 'plugins', 'stdioCommands']));
  });

  it.each(keys)('an initialize carrying %s leaves the exposure unchanged', async (key) => {
    const baseline = await exposure();
    expect(baseline.tools).not.toContain('conf__test_error_handling');
    const carried = await exposure({ [key]: HOSTILE[key] ?? { anything: true } });
    expect(carried).toEqual(baseline);
  });

  it('still refuses the Host and Origin a client asked to be allowed', async () => {
    await exposure({ allowedHosts: ['evil.example'], allowedOrigins: ['https://evil.example'] });
    const host = await rawRequest(gateway.url, { headers: { ...MCP_POST_HEADERS, host: 'evil.example' }, body: '{}' });
    expect(host.status).toBe(403);
    const origin = await rawRequest(gateway.url, { headers: { ...MCP_POST_HEADERS, origin: 'https://evil.example' }, body: '{}' });
    expect(origin.status).toBe(403);
  });

  it('leaves a 2026 request carrying all of them served as any other', async () => {
    const plain = await modern(gateway.url, 'tools/list');
    const carried = await modern(gateway.url, 'tools/list', {}, HOSTILE);
    const names = (answer: typeof plain) => ((answer.result as { tools?: Array<{ name: string }> } | undefined)?.tools ?? []).map((t) => t.name);
    expect(names(carried)).toEqual(names(plain));
    expect(names(plain).length).toBeGreaterThan(0);
  });
});

describe('the options schema', () => {
  it('ignores unknown keys', async () => {
    expect(await exposure({ colour: 'blue', 'x-y': 1 })).toEqual(await exposure());
  });

  it.each([
    ['dataMode', 'files'],
    ['agentPersona', 7],
    ['eventStoreLimit', 0],
    ['eventStoreLimit', 2.5],
    ['deferTools', 'yes'],
  ])('refuses %s = %j with -32602 naming the key (both eras)', async (key, value) => {
    const legacy = await initialize2025(perTest, gateway.url, { [key]: value });
    expect(legacy.response.status).toBe(400);
    expect(legacy.error).toMatchObject({ code: -32602, message: expect.stringContaining(key) });
    const refused = await modern(gateway.url, 'tools/list', {}, { [key]: value });
    expect(refused.error).toMatchObject({ code: -32602, message: expect.stringContaining(key) });
  });
});

describe('dataMode', () => {
  it('adds <server>__list_resources and <server>__read_resource tools to a 2025 session that asks for tools', async () => {
    const session = await initialize2025(perTest, gateway.url, { dataMode: 'tools' });
    const tools = ((await session.post!({ method: 'tools/list' }))?.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['conf__list_resources', 'conf__read_resource']));
    const listed = (await session.post!({ method: 'tools/call', params: { name: 'conf__list_resources', arguments: {} } }))?.result as { structuredContent: { resources: Array<{ uri: string }> } };
    expect(listed.structuredContent.resources.map((r) => r.uri)).toContain('test://static-text');
    const read = (await session.post!({ method: 'tools/call', params: { name: 'conf__read_resource', arguments: { uri: 'test://static-text' } } }))?.result as {
      content: Array<{ type: string; resource: { text: string } }>;
    };
    expect(read.content[0]).toMatchObject({ type: 'resource', resource: { text: 'This is the content of the static text resource.' } });
    const unknown = await session.post!({ method: 'tools/call', params: { name: 'conf__read_resource', arguments: { uri: 'portcullis://agents-nope' } } });
    expect((unknown?.error as { message: string } | undefined)?.message).toContain('Resource not found');
  });

  it('shows them to a 2026 client only on the requests that ask, and never by default', async () => {
    const { client } = await connectClient(perTest, gateway.url, '2026');
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('conf__list_resources');
    const asked = await modern(gateway.url, 'tools/call', { name: 'conf__read_resource', arguments: { uri: 'test://static-text' } }, { dataMode: 'tools' });
    expect(JSON.stringify(asked.result)).toContain('static text resource');
    const notAsked = await modern(gateway.url, 'tools/call', { name: 'conf__read_resource', arguments: { uri: 'test://static-text' } });
    expect(notAsked.error?.message).toContain('Unknown tool');
  });
});

async function retainedEvents(url: string): Promise<number> {
  const text = (await rawRequest(new URL('/metrics', url).href, { method: 'GET' })).body;
  return Number(/^portcullis_event_store_events (\d+)$/m.exec(text)?.[1]);
}

describe('eventStoreLimit', () => {
  it("keeps a session's history within its own limit, and never above the config's", async () => {
    // Every call streams (eventStore.streamAfterMs 0): a priming event and the result, two events each.
    const emit = async (options: unknown, calls: number) => {
      const session = await initialize2025(perTest, gateway.url, options);
      for (let i = 0; i < calls; i++) {
        const answer = await session.post!({ method: 'tools/call', params: { name: 'conf__test_simple_text', arguments: {} } });
        expect(answer).toHaveProperty('result');
      }
    };
    // Asking for more than the config keeps gets the config's limit.
    await emit({ eventStoreLimit: 1_000_000 }, EVENT_LIMIT);
    expect(await retainedEvents(gateway.url)).toBe(EVENT_LIMIT);
    await perTest.run(); // that session (and its history) ends
    await emit({ eventStoreLimit: 3 }, 10);
    expect(await retainedEvents(gateway.url)).toBe(3);
  });
});

describe('the announced server', () => {
  it('names the bound URL in the initialize result, and /readyz shows the same', async () => {
    const { result } = await initialize2025(perTest, gateway.url);
    expect(result?._meta?.['portcullis/server']).toEqual({ name: 'portcullis', url: gateway.url });
    expect(gateway.publicUrl).toBe(gateway.url);
    expect((await rawRequest(new URL('/readyz', gateway.url).href, { method: 'GET' })).json()).toMatchObject({ url: gateway.url });
  });

  it('names listen.publicUrl when configured, for the aggregate and each side channel, in both eras', async () => {
    expect(forbidding.publicUrl).toBe('https://mcp.example.com/team/mcp');
    const legacy = await initialize2025(perTest, forbidding.url);
    expect(legacy.result?._meta?.['portcullis/server']).toEqual({ name: 'portcullis', url: 'https://mcp.example.com/team/mcp' });
    const side = await modern(`${forbidding.url}/servers/conf`, 'server/discover');
    expect(side.result?._meta?.['portcullis/server']).toEqual({ name: 'conf', url: 'https://mcp.example.com/team/mcp/servers/conf' });
    expect((await rawRequest(new URL('/readyz', forbidding.url).href, { method: 'GET' })).json()).toMatchObject({ url: 'https://mcp.example.com/team/mcp' });
  });
});
