/**
 * `@modelcontextprotocol/server-everything` (2025-era, over stdio, `isolation: "session"`) registers
 * its capability-dependent tools per connection at `initialize`. A 2026 client's lists come from a
 * connection initialised with the capabilities that client declared (routing/scopes/listing-connections.ts),
 * so it sees what it can use, as it would talking to the server directly, and a client that
 * declared nothing does not see them. Real child processes, the SDK's 2026 client.
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { assertBuilt, Cleanup, connectClient, errorOf, startTestGateway, textOf } from './harness.js';
import { everythingServer } from './tasks/everything.js';

const cleanup = new Cleanup();
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  gateway = await startTestGateway(cleanup, { everything: everythingServer({ isolation: 'session' }) });
});
afterAll(() => cleanup.run());

const CAPABILITY_TOOLS = [
  'everything__get-roots-list',
  'everything__trigger-elicitation-request',
  'everything__trigger-sampling-request',
  'everything__trigger-url-elicitation',
];

async function client2026(capabilities: ClientCapabilities) {
  const { client } = await connectClient(cleanup, gateway.url, '2026', {
    capabilities,
    setup: (c) => {
      if (capabilities.roots !== undefined) c.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///tmp/listed-root', name: 'root' }] }));
      if (capabilities.sampling !== undefined) {
        c.setRequestHandler('sampling/createMessage', () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled' } }));
      }
    },
  });
  return client;
}

const toolNames = async (client: Awaited<ReturnType<typeof client2026>>) => (await client.listTools()).tools.map((tool) => tool.name);

describe("server-everything's capability-dependent tools for 2026 clients", () => {
  it('lists them to a 2026 client that declared roots, sampling and elicitation, from its first request', async () => {
    const client = await client2026({ roots: {}, sampling: {}, elicitation: { form: {}, url: {} } });
    expect(await toolNames(client)).toEqual(expect.arrayContaining(CAPABILITY_TOOLS));
  });

  it('lists only those matching what the client declared', async () => {
    const client = await client2026({ roots: {} });
    const names = await toolNames(client);
    expect(names).toContain('everything__get-roots-list');
    expect(names).not.toContain('everything__trigger-sampling-request');
    expect(names).not.toContain('everything__trigger-elicitation-request');
  });

  it('does not list them to a 2026 client that declared nothing, which cannot call them either', async () => {
    const client = await client2026({});
    const names = await toolNames(client);
    for (const tool of CAPABILITY_TOOLS) expect(names).not.toContain(tool);
    expect((await errorOf(client.callTool({ name: 'everything__get-roots-list', arguments: {} }))).message).toMatch(/Unknown tool/);
  });

  it('runs a listed one for the client that declared what it needs (roots, asked as an input round)', async () => {
    const client = await client2026({ roots: {} });
    expect(await toolNames(client)).toContain('everything__get-roots-list');
    const text = textOf(await client.callTool({ name: 'everything__get-roots-list', arguments: {} }));
    expect(text).toContain('file:///tmp/listed-root');
  });

  it('runs sampling mid-call for the client that declared it', async () => {
    const client = await client2026({ sampling: {} });
    const text = textOf(await client.callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 5 } }));
    expect(text).toContain('sampled');
  });
});
