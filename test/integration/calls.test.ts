/**
 * Calls through a real gateway reach the one upstream that owns the name, under the upstream's
 * own name; progress comes back with the client's token; a client's cancellation reaches the
 * upstream. What reached each upstream is read from a recording proxy (HTTP) and a recorded stdin
 * (stdio), so routing is asserted on the wire, not inferred from identical fixture answers.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  connectClient,
  ERAS,
  errorOf,
  gatewayOverUpstreams,
  messagesOf,
  openRawSession,
  type RecordedMessage,
  recordedStdin,
  textOf,
  UPSTREAM_KINDS,
  type UpstreamKind,
  waitUntil,
} from './harness.js';

const scope = gatewayOverUpstreams();
const { perTest } = scope;

type Server = UpstreamKind;
const SERVERS = UPSTREAM_KINDS;

/** Every JSON-RPC message that reached one upstream so far. */
function reached(server: Server): RecordedMessage[] {
  return server === 'http' ? scope.upstreams.proxy.messages : recordedStdin(scope.upstreams.stdinLog);
}

/** The messages of `method` that reached `server` and satisfy `match`. */
function reachedWith(server: Server, method: string, match: (params: Record<string, unknown>) => boolean): RecordedMessage[] {
  return reached(server).filter((m) => m.method === method && m.params !== undefined && match(m.params));
}

const argsOf = (params: Record<string, unknown>) => (params.arguments ?? {}) as Record<string, unknown>;

describe.each(ERAS)('routing for a %s client', (era) => {
  it.each(SERVERS)('routes tools/call of a %s tool to that upstream, under its own name', async (server) => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const token = randomUUID();
    const result = await client.callTool({ name: `${server}__echo`, arguments: { text: token } });
    expect(textOf(result)).toBe(token);
    const other: Server = server === 'http' ? 'stdio' : 'http';
    expect(reachedWith(server, 'tools/call', (p) => p.name === 'echo' && argsOf(p).text === token)).toHaveLength(1);
    expect(reachedWith(other, 'tools/call', (p) => argsOf(p).text === token)).toEqual([]);
    // A 2026 result names the gateway as its server, never the upstream behind it.
    const stamped = (result._meta as Record<string, { name?: string }> | undefined)?.['io.modelcontextprotocol/serverInfo'];
    if (era === '2026') expect(stamped?.name).toBe('portcullis');
    else expect(stamped).toBeUndefined();
  });

  it.each(SERVERS)('routes prompts/get of a %s prompt to its upstream, under its own name', async (server) => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const token = randomUUID();
    const result = await client.getPrompt({ name: `${server}__test_prompt_with_arguments`, arguments: { arg1: token, arg2: 'two' } });
    expect(JSON.stringify(result.messages)).toContain(`arg1='${token}'`);
    const other: Server = server === 'http' ? 'stdio' : 'http';
    const match = (p: Record<string, unknown>) => (p.arguments as Record<string, unknown> | undefined)?.arg1 === token;
    expect(reachedWith(server, 'prompts/get', (p) => p.name === 'test_prompt_with_arguments' && match(p))).toHaveLength(1);
    expect(reachedWith(other, 'prompts/get', match)).toEqual([]);
  });

  it.each(SERVERS)('routes completion of a %s prompt argument to its upstream', async (server) => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const before = reachedWith(server, 'completion/complete', () => true).length;
    const result = await client.complete({ ref: { type: 'ref/prompt', name: `${server}__test_prompt_with_arguments` }, argument: { name: 'arg1', value: 'pa' } });
    expect(result.completion.values).toEqual(['paris', 'park', 'party']);
    const forwarded = reachedWith(server, 'completion/complete', () => true).slice(before);
    expect(forwarded.map((m) => (m.params?.ref as { name?: string }).name)).toEqual(['test_prompt_with_arguments']);
  });

  it('routes resources/read of a static URI and of a template URI to exactly one owning upstream', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const id = `id-${randomUUID()}`;
    const templated = `test://template/${id}/data`;

    const staticResult = await client.readResource({ uri: 'test://static-text' });
    expect(staticResult.contents).toEqual([expect.objectContaining({ uri: 'test://static-text', text: 'This is the content of the static text resource.' })]);
    const templateResult = await client.readResource({ uri: templated });
    const content = templateResult.contents[0] as { uri: string; text: string };
    expect(content.uri).toBe(templated);
    expect(JSON.parse(content.text)).toMatchObject({ id, templateTest: true });

    const reads = SERVERS.map((server) => reachedWith(server, 'resources/read', (p) => p.uri === templated).length);
    expect(reads.sort()).toEqual([0, 1]);
  });

  it('routes completion of a resource template variable to the template owner', async () => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const result = await client.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '4' } });
    expect(result.completion.values).toEqual(['456']);
  });
});

describe.each(ERAS)('progress for a %s client', (era) => {
  it.each(SERVERS)('delivers the %s upstream progress of a call to the onprogress callback of that call', async (server) => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const seen: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool({ name: `${server}__test_tool_with_progress`, arguments: {} }, { onprogress: (p) => seen.push(p) });
    expect(textOf(result)).toMatch(/^progress token: /);
    // The SDK dispatches progress by token: a callback hit means the client's own token came back.
    expect(seen.map((p) => [p.progress, p.total])).toEqual([
      [0, 100],
      [50, 100],
      [100, 100],
    ]);
  });
});

describe('progress tokens chosen by a 2025 client', () => {
  it.each(SERVERS)('come back unchanged on progress from the %s upstream', async (server) => {
    const session = await openRawSession(scope.gateway.url);
    perTest.add(() => session.delete().then(() => undefined));
    const token = `client-token-${randomUUID()}`;
    const response = await session.post({
      id: 7,
      method: 'tools/call',
      params: { name: `${server}__test_tool_with_progress`, arguments: {}, _meta: { progressToken: token } },
    });
    expect(response.status).toBe(200);
    const messages = messagesOf(response);
    const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params as Record<string, unknown>);
    expect(progress.map((p) => [p.progressToken, p.progress])).toEqual([
      [token, 0],
      [token, 50],
      [token, 100],
    ]);
    expect(messages.at(-1)).toMatchObject({ id: 7, result: { content: [{ type: 'text' }] } });
  });
});

describe.each(ERAS)('cancellation by a %s client', (era) => {
  it.each(SERVERS)('reaches the %s upstream, and the next call still works', async (server) => {
    const { client } = await connectClient(perTest, scope.gateway.url, era);
    const tag = randomUUID();
    const controller = new AbortController();
    let progressed!: () => void;
    const running = new Promise<void>((resolve) => (progressed = resolve));
    const call = client.callTool(
      // `tag` is not in the tool's schema; it only marks this call on the wire.
      { name: `${server}__slow`, arguments: { ms: 60_000, steps: 600, tag } },
      { signal: controller.signal, onprogress: () => progressed() },
    );
    await running; // the upstream is executing the call
    controller.abort();
    expect((await errorOf(call)).message).toMatch(/abort/i);

    const [upstreamCall] = reachedWith(server, 'tools/call', (p) => argsOf(p).tag === tag);
    expect(upstreamCall).toBeDefined();
    // 2025-era upstreams are told with notifications/cancelled; 2026-era ones by the request's stream being aborted.
    await waitUntil(
      () =>
        upstreamCall!.abortedByClient ||
        reachedWith(server, 'notifications/cancelled', (p) => p.requestId === upstreamCall!.id).length > 0,
      `cancellation of the ${server} call reaching the upstream`,
    );
    expect(textOf(await client.callTool({ name: `${server}__echo`, arguments: { text: 'after cancel' } }))).toBe('after cancel');
  });
});
