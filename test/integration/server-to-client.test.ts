/**
 * What upstreams originate during a call reaches the client through a real gateway: sampling and
 * elicitation requests (answered by the client's own handlers, the answer shaping the tool's
 * result), log messages, and `tools/list_changed` with a refreshed catalogue behind it.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import {
  collectNotifications,
  connectClient,
  type Era,
  ERAS,
  gatewayOverUpstreams,
  textOf,
  UPSTREAM_KINDS,
  waitUntil,
} from './harness.js';

const scope = gatewayOverUpstreams();
const { perTest } = scope;

const SERVERS = UPSTREAM_KINDS;
const LOG_LEVEL_META_KEY = 'io.modelcontextprotocol/logLevel';

interface Asked {
  sampling: unknown[];
  elicitation: unknown[];
}

/** A client that declares sampling and elicitation and answers both from `answer`. */
async function answeringClient(era: Era, answer: string): Promise<{ client: Client; asked: Asked }> {
  const asked: Asked = { sampling: [], elicitation: [] };
  const { client } = await connectClient(perTest, scope.gateway.url, era, {
    capabilities: { sampling: {}, elicitation: { form: {} } },
    setup: (c) => {
      c.setRequestHandler('sampling/createMessage', (request) => {
        asked.sampling.push(request.params);
        return { model: 'test-model', role: 'assistant', content: { type: 'text', text: answer } };
      });
      c.setRequestHandler('elicitation/create', (request) => {
        asked.elicitation.push(request.params);
        return { action: 'accept', content: { response: answer } };
      });
    },
  });
  return { client, asked };
}

describe('server-to-client requests relayed to a 2025 client', () => {
  it.each(SERVERS)('relays sampling asked by the %s upstream mid-call, and the result carries the answer', async (server) => {
    const answer = `sampled-${randomUUID()}`;
    const { client, asked } = await answeringClient('2025', answer);
    const result = await client.callTool({ name: `${server}__test_sampling`, arguments: { prompt: 'What is 2+2?' } });
    expect(textOf(result)).toBe(`LLM response: ${answer}`);
    expect(asked.sampling).toEqual([
      expect.objectContaining({ messages: [{ role: 'user', content: { type: 'text', text: 'What is 2+2?' } }], maxTokens: 100 }),
    ]);
  });

  it.each(SERVERS)('relays elicitation asked by the %s upstream mid-call, and the result carries the answer', async (server) => {
    const answer = `elicited-${randomUUID()}`;
    const { client, asked } = await answeringClient('2025', answer);
    const result = await client.callTool({ name: `${server}__test_elicitation`, arguments: { message: 'Your name?' } });
    expect(textOf(result)).toBe(`Elicitation completed: action=accept, content=${JSON.stringify({ response: answer })}`);
    expect(asked.elicitation).toEqual([expect.objectContaining({ message: 'Your name?' })]);
  });
});

describe('input requests of a 2026-era upstream, for a 2026 client', () => {
  it.each(['test_sampling', 'test_elicitation'])('bridges the stdio (2025-era) upstream asking mid-call for stdio__%s as input_required rounds', async (tool) => {
    const answer = `bridged-${randomUUID()}`;
    const { client, asked } = await answeringClient('2026', answer);
    const result = await client.callTool({ name: `stdio__${tool}`, arguments: { prompt: 'p', message: 'm' } });
    expect(textOf(result)).toContain(answer);
    expect(asked.sampling.length + asked.elicitation.length).toBe(1);
  });

  it.each(['test_sampling', 'test_elicitation'])('are fulfilled by the client through the gateway for http__%s', async (tool) => {
    const answer = `answer-${randomUUID()}`;
    const { client, asked } = await answeringClient('2026', answer);
    const result = await client.callTool({ name: `http__${tool}`, arguments: { prompt: 'p', message: 'm' } });
    expect(textOf(result)).toContain(answer);
    expect(asked.sampling.length + asked.elicitation.length).toBe(1);
  });
});

describe.each(ERAS)('log messages for a %s client', (era) => {
  it.each(SERVERS)('relays the notifications/message a %s tool sends during the call, in order', async (server) => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const logs = collectNotifications<{ logger?: string; data: { seq: number } }>(client, 'notifications/message');
    await client.callTool({ name: `${server}__emit_notifications`, arguments: { count: 5 } });
    const seen = await logs.waitFor(5);
    expect(seen.map((m) => m.data.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(seen.map((m) => m.logger))).toEqual(new Set(['emit_notifications']));
  });
});

const LOGGED = ['Tool execution started', 'Tool processing data', 'Tool execution completed'];

describe('log levels', () => {
  it('relays a stdio tool’s log calls to a 2025 client that set a log level', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, '2025');
    const logs = collectNotifications<{ data: unknown }>(client, 'notifications/message');
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'stdio__test_tool_with_logging', arguments: {} });
    expect((await logs.waitFor(3)).map((m) => m.data)).toEqual(LOGGED);
  });

  it('relays an HTTP tool’s log calls to a 2025 client that set a log level', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, '2025');
    const logs = collectNotifications<{ data: unknown }>(client, 'notifications/message');
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'http__test_tool_with_logging', arguments: {} });
    expect((await logs.waitFor(3)).map((m) => m.data)).toEqual(LOGGED);
  });

  it.each(SERVERS)('relays a %s tool’s log calls to a 2026 client whose request carries a log level', async (server) => {
    const { client } = await connectClient(perTest, scope.gateway.url, '2026');
    const logs = collectNotifications<{ data: unknown }>(client, 'notifications/message');
    await client.callTool({ name: `${server}__test_tool_with_logging`, arguments: {}, _meta: { [LOG_LEVEL_META_KEY]: 'debug' } });
    expect((await logs.waitFor(3)).map((m) => m.data)).toEqual(LOGGED);
  });
});

describe('tools/list_changed in a 2025 session', () => {
  it('tells the client when a stdio upstream adds and removes a tool, and tools/list follows', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
    expect(await names()).not.toContain('stdio__toggled_tool');

    await client.callTool({ name: 'stdio__toggle_tool', arguments: { enabled: true } });
    await changed.waitFor(1);
    expect(await names()).toContain('stdio__toggled_tool');
    expect(textOf(await client.callTool({ name: 'stdio__toggled_tool', arguments: {} }))).toBe('toggled tool ran');

    await client.callTool({ name: 'stdio__toggle_tool', arguments: { enabled: false } });
    await changed.waitFor(2);
    expect(await names()).not.toContain('stdio__toggled_tool');
  });

  it('tells the client when an HTTP upstream adds a tool, and tools/list follows', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, '2025');
    perTest.add(async () => {
      await client.callTool({ name: 'http__toggle_tool', arguments: { enabled: false } }).catch(() => undefined);
    });
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('http__toggled_tool');

    await client.callTool({ name: 'http__toggle_tool', arguments: { enabled: true } });
    await changed.waitFor(1);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('http__toggled_tool');
  });
});

describe('tools/list for 2026 clients', () => {
  // Gateway bug: 2026 clients are served lists from each server's primary link, which negotiates
  // 2026-07-28 with an HTTP upstream. In that era list changes are announced only on a
  // `subscriptions/listen` stream, which the link never opens, and the link caches each list until
  // a list_changed notification (src/upstream/link.ts, `list()`), ignoring the upstream's
  // `ttlMs: 0` hint; the primary is connected with era 'any' (src/upstream/registry.ts,
  // `connect()`). So the list stays stale until the link reconnects. Flip to `it` once fixed.
  it('shows a tool an HTTP upstream added since the last list', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, '2026');
    perTest.add(async () => {
      await client.callTool({ name: 'http__toggle_tool', arguments: { enabled: false } }).catch(() => undefined);
    });
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('http__toggled_tool');

    await client.callTool({ name: 'http__toggle_tool', arguments: { enabled: true } });
    await waitUntil(
      async () => (await client.listTools()).tools.some((tool) => tool.name === 'http__toggled_tool'),
      'http__toggled_tool in tools/list',
      2_000,
      200,
    );
  });
});
