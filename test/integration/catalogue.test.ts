/**
 * The merged catalogue through a real gateway: two upstreams (the fixture over stdio and over
 * Streamable HTTP) aggregated and namespaced `<server>__<tool>`, the per-server side channels, and
 * the `enabledTools` / `disabledTools` filters, seen by SDK v2 clients of both protocol eras.
 */
import type { Client } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import {
  connectClient,
  ERAS,
  errorOf,
  gatewayOverUpstreams,
  MODERN_VERSION,
  sideChannelUrl,
  startTestGateway,
  textOf,
} from './harness.js';

const scope = gatewayOverUpstreams();
const { perFile, perTest } = scope;
let filtered: RunningGateway;

beforeAll(async () => {
  filtered = await startTestGateway(
    perFile,
    scope.upstreams.servers({ stdio: { enabledTools: ['echo', 'slow'] }, http: { disabledTools: ['echo'] } }),
  );
});

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);

/** An error with the tool name masked, so two errors can be compared modulo the name. */
const masked = (error: { code?: number; message: string; data?: unknown }, name: string) => ({
  ...error,
  message: error.message.split(name).join('<tool>'),
});

describe.each(ERAS)('the catalogue seen by a %s client', (era) => {
  it('negotiates its own era with the gateway', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    expect(client.getNegotiatedProtocolVersion() === MODERN_VERSION).toBe(era === '2026');
  });

  it('lists the tools of both upstreams, each namespaced <server>__<tool>', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const stdio = await connectClient(perTest, sideChannelUrl(scope.gateway.url, 'stdio'), era);
    const http = await connectClient(perTest, sideChannelUrl(scope.gateway.url, 'http'), era);

    const names = await toolNames(client);
    const expected = [
      ...(await toolNames(stdio.client)).map((name) => `stdio__${name}`),
      ...(await toolNames(http.client)).map((name) => `http__${name}`),
    ];
    expect([...names].sort()).toEqual(expected.sort());
    expect(names).toEqual(expect.arrayContaining(['stdio__echo', 'http__echo', 'stdio__crash', 'stdio__slow', 'http__slow']));
    // `crash` exists only in the fixture's stdio mode: each upstream contributes its own list.
    expect(names).not.toContain('http__crash');
  });

  it('serves each upstream unprefixed on /mcp/servers/<name>', async () => {
    const stdio = await connectClient(perTest, sideChannelUrl(scope.gateway.url, 'stdio'), era);
    const http = await connectClient(perTest, sideChannelUrl(scope.gateway.url, 'http'), era);

    const stdioNames = await toolNames(stdio.client);
    expect(stdioNames).toEqual(expect.arrayContaining(['echo', 'slow', 'crash', 'toggle_tool']));
    expect(await toolNames(http.client)).toEqual(expect.arrayContaining(['echo', 'slow', 'toggle_tool']));
    expect(stdioNames.filter((name) => name.includes('__'))).toEqual([]);
    expect(textOf(await http.client.callTool({ name: 'echo', arguments: { text: `side ${era}` } }))).toBe(`side ${era}`);
  });

  it('lists a resource and a resource template that both upstreams offer once each', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const uris = (await client.listResources()).resources.map((resource) => resource.uri);
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate);
    expect(uris.filter((uri) => uri === 'test://static-text')).toHaveLength(1);
    expect(templates.filter((template) => template === 'test://template/{id}/data')).toHaveLength(1);
  });

  it('lists the prompts of both upstreams namespaced like tools', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const names = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(names).toEqual(expect.arrayContaining(['stdio__test_simple_prompt', 'http__test_simple_prompt']));
  });

  it('answers a call to a tool that no upstream has with a JSON-RPC invalid-params error', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const error = await errorOf(client.callTool({ name: 'stdio__no_such_tool', arguments: {} }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('stdio__no_such_tool');
  });
});

describe.each(ERAS)('tool filters seen by a %s client', (era) => {
  it('leaves tools outside enabledTools, or inside disabledTools, out of tools/list', async () => {
    const { client } = await connectClient(perTest, filtered.url, era);
    const names = await toolNames(client);
    const stdioNames = names.filter((name) => name.startsWith('stdio__'));
    expect(stdioNames.sort()).toEqual(['stdio__echo', 'stdio__slow']);
    expect(names).not.toContain('http__echo');
    expect(names).toEqual(expect.arrayContaining(['http__slow', 'http__toggle_tool']));
  });

  it.each([
    ['stdio__crash', 'stdio__no_such_tool', 'not in the stdio enabledTools'],
    ['http__echo', 'http__no_such_tool', 'in the HTTP disabledTools'],
  ])('answers a call to %s exactly like a call to a tool that does not exist (%s, %s)', async (hidden, missing) => {
    const { client } = await connectClient(perTest, filtered.url, era);
    const refused = await errorOf(client.callTool({ name: hidden, arguments: { text: 'x' } }));
    const unknown = await errorOf(client.callTool({ name: missing, arguments: { text: 'x' } }));
    expect(refused.message).toContain(hidden);
    expect(masked(refused, hidden)).toEqual(masked(unknown, missing));
  });

  it('keeps a filtered tool hidden and uncallable on the per-server side channel', async () => {
    const { client } = await connectClient(perTest, sideChannelUrl(filtered.url, 'http'), era);
    expect(await toolNames(client)).not.toContain('echo');
    const refused = await errorOf(client.callTool({ name: 'echo', arguments: { text: 'x' } }));
    const unknown = await errorOf(client.callTool({ name: 'no_such_tool', arguments: { text: 'x' } }));
    expect(masked(refused, 'echo')).toEqual(masked(unknown, 'no_such_tool'));
  });
});
