/**
 * `/metrics` of a real gateway: scraped over HTTP after real calls from SDK clients of both eras,
 * read by a strict exposition parser and checked by `promtool check metrics` where installed.
 * Labels are bounded (10,000 made-up tool names add no series), the route sits behind the Host
 * guard and authentication like the MCP endpoint, and two gateways in one process keep apart.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import type { RunningGateway } from '../../src/gateway.js';
import { connectClient, errorOf, sideChannelUrl, startTestGateway, textOf } from '../integration/harness/clients.js';
import { newMarker } from '../integration/harness/paths.js';
import { bearerPrincipals, policyFile, startGatewayFor } from '../integration/harness/principals.js';
import { MCP_POST_HEADERS, messagesOf, openRawSession, rawRequest } from '../integration/harness/raw-http.js';
import { startPluginGateway } from '../customizations/plugin-test-gateway.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { Cleanup, waitUntil } from '../integration/harness/wait.js';
import { killPids, MARKER_VAR, processesWithMarker } from '../integration/harness/processes.js';
import { seededRandom } from '../setup/random.js';
import { parseExposition, promtoolCheck, type Exposition } from './exposition.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

const metricsUrl = (gateway: RunningGateway) => new URL('/metrics', gateway.url).href;

async function scrape(gateway: RunningGateway, headers: Record<string, string> = {}): Promise<{ body: string; parsed: Exposition }> {
  const response = await rawRequest(metricsUrl(gateway), { method: 'GET', headers });
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toContain('text/plain; version=0.0.4');
  return { body: response.body, parsed: parseExposition(response.body) };
}

const DURATION = 'mcp_server_operation_duration_seconds';

describe('/metrics', () => {
  it('counts real calls of both eras by method, server, catalogue tool and outcome, in a valid exposition', async () => {
    const gateway = await startTestGateway(cleanup, { a: stdioServer(newMarker()), b: stdioServer(newMarker()) });
    const legacy = await connectClient(cleanup, gateway.url, '2025');
    const modern = await connectClient(cleanup, gateway.url, '2026');
    await legacy.client.callTool({ name: 'a__test_simple_text', arguments: {} });
    await legacy.client.callTool({ name: 'a__test_simple_text', arguments: {} });
    await modern.client.callTool({ name: 'b__test_simple_text', arguments: {} });
    await legacy.client.listTools();
    expect((await errorOf(modern.client.callTool({ name: 'no_such_tool', arguments: {} }))).message).toContain('Unknown tool');
    const side = await connectClient(cleanup, sideChannelUrl(gateway.url, 'b'), '2025');
    await side.client.listTools();

    const { body, parsed } = await scrape(gateway);
    expect(parsed.types.get(DURATION)).toBe('histogram');
    const count = (labels: Record<string, string>) => parsed.value(`${DURATION}_count`, labels);
    expect(count({ mcp_method_name: 'tools/call', server: 'a', gen_ai_tool_name: 'a__test_simple_text', outcome: 'ok' })).toBe(2);
    expect(count({ mcp_method_name: 'tools/call', server: 'b', gen_ai_tool_name: 'b__test_simple_text', outcome: 'ok' })).toBe(1);
    expect(count({ mcp_method_name: 'tools/call', server: '', gen_ai_tool_name: 'unknown', outcome: 'error' })).toBe(1);
    // The aggregate's merged list has no single server; the side channel's is its server's.
    expect(count({ mcp_method_name: 'tools/list', server: '', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(count({ mcp_method_name: 'tools/list', server: 'b', outcome: 'ok' })).toBe(1);
    expect(parsed.find(`${DURATION}_bucket`, { gen_ai_tool_name: 'a__test_simple_text', le: '+Inf' })[0]?.value).toBe(2);

    expect(parsed.value('portcullis_sessions', { era: '2025' })).toBe(2);
    expect(parsed.value('portcullis_sessions', { era: '2026' })).toBe(0);
    expect(parsed.value('portcullis_upstream_state', { server: 'a', state: 'ready' })).toBe(1);
    expect(parsed.value('portcullis_upstream_state', { server: 'a', state: 'error' })).toBe(0);
    expect(parsed.value('portcullis_stdio_children', { server: 'a' })).toBeGreaterThanOrEqual(1);
    expect(parsed.find('portcullis_event_store_events')).toHaveLength(1);
    expect(parsed.find('portcullis_event_store_bytes')).toHaveLength(1);
    expect(parsed.types.get('portcullis_upstream_restarts_total')).toBe('counter');
    expect(parsed.types.get('portcullis_lease_pool_waits_total')).toBe('counter');
    expect(parsed.types.get('portcullis_egress_refusals_total')).toBe('counter');
    expect(parsed.value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(parsed.find('nodejs_heap_size_used_bytes')).toHaveLength(1);

    const promtool = promtoolCheck(body);
    if (promtool === undefined) console.warn('promtool not installed (Debian package "prometheus"): skipping only the promtool check');
    else expect(promtool, promtool.output).toMatchObject({ ok: true });
  });

  it('adds no series for 10,000 distinct tool names the catalogue does not list', async () => {
    const gateway = await startTestGateway(cleanup, { a: stdioServer(newMarker()) });
    const { client } = await connectClient(cleanup, gateway.url, '2025');
    await client.callTool({ name: 'bogus-warmup', arguments: {} }).catch(() => undefined);
    // The gateway's own series (process metrics grow on their own: handle kinds, GC kinds).
    const own = (parsed: Exposition) => parsed.samples.filter((s) => /^(mcp_|portcullis_)/.test(s.name)).length;
    const before = own((await scrape(gateway)).parsed);
    const random = seededRandom('metrics-endpoint made-up names');
    const names = Array.from({ length: 10_000 }, (_, i) => `made-up-${i}-${random.int(36 ** 8).toString(36)}`);
    for (let i = 0; i < names.length; i += 200) {
      await Promise.all(names.slice(i, i + 200).map((name) => client.callTool({ name, arguments: {} }).then(() => 'answered', () => 'refused')));
    }
    const { body, parsed } = await scrape(gateway);
    expect(own(parsed)).toBe(before);
    expect(body).not.toContain('made-up-');
    expect(parsed.value(`${DURATION}_count`, { mcp_method_name: 'tools/call', gen_ai_tool_name: 'unknown', outcome: 'error' })).toBe(10_001);
  }, 120_000);

  it('sits behind the Host guard like the MCP endpoint', async () => {
    const gateway = await startTestGateway(cleanup, {});
    const rebinding = await rawRequest(metricsUrl(gateway), { method: 'GET', headers: { host: 'attacker.example' } });
    expect(rebinding.status).toBe(403);
    expect(rebinding.body).not.toContain('process_cpu');
    const foreignOrigin = await rawRequest(metricsUrl(gateway), { method: 'GET', headers: { origin: 'https://attacker.example' } });
    expect(foreignOrigin.status).toBe(403);
  });

  it('needs the bearer token when authentication is on, and counts the refusals by reason', async () => {
    const principals = bearerPrincipals('scraper');
    const gateway = await startGatewayFor(cleanup, principals, {}, { policy: policyFile({ admins: ['scraper'] }) });
    const anonymous = await rawRequest(metricsUrl(gateway), { method: 'GET' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toContain('Bearer');
    expect(anonymous.body).not.toContain('process_cpu');
    const wrong = await rawRequest(metricsUrl(gateway), { method: 'GET', headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    const { parsed } = await scrape(gateway, principals.headers('scraper'));
    expect(parsed.value('portcullis_auth_failures_total', { reason: 'AUTH_MISSING' })).toBe(1);
    expect(parsed.value('portcullis_auth_failures_total', { reason: 'AUTH_INVALID' })).toBe(1);
  });

  it("serves only the policy's admins: a principal whose access rules hide a server gets 403 and no server name", async () => {
    const principals = bearerPrincipals('alice', 'ops');
    const policy = policyFile({ admins: ['ops'], access: { default: 'allow', rules: [{ principals: ['alice'], effect: 'deny', servers: ['secretive'] }] } });
    const gateway = await startGatewayFor(cleanup, principals, { secretive: stdioServer(newMarker(), { isolation: 'shared' }) }, { policy });
    const alice = await rawRequest(metricsUrl(gateway), { method: 'GET', headers: principals.headers('alice') });
    expect(alice.status).toBe(403);
    expect(alice.json().error).toMatchObject({ data: { code: 'ADMIN_REFUSED' } });
    expect(alice.body).not.toContain('secretive');
    const { parsed } = await scrape(gateway, principals.headers('ops'));
    expect(parsed.value('portcullis_upstream_state', { server: 'secretive', state: 'ready' })).toBe(1);
  });

  it('keeps each gateway of a process to its own series', async () => {
    const first = await startTestGateway(cleanup, { a: stdioServer(newMarker()) });
    const second = await startTestGateway(cleanup, { a: stdioServer(newMarker()) });
    const { client } = await connectClient(cleanup, first.url, '2025');
    await client.callTool({ name: 'a__test_simple_text', arguments: {} });
    const one = (await scrape(first)).parsed;
    const other = (await scrape(second)).parsed;
    expect(one.value(`${DURATION}_count`, { gen_ai_tool_name: 'a__test_simple_text' })).toBe(1);
    expect(other.find(`${DURATION}_count`, { gen_ai_tool_name: 'a__test_simple_text' })).toEqual([]);
    expect(other.value('portcullis_sessions', { era: '2025' })).toBe(0);
  });

  it('counts a restart when a crashed stdio upstream comes back, and tracks its children', async () => {
    const marker = newMarker();
    const gateway = await startTestGateway(cleanup, { a: stdioServer(marker) });
    const before = (await scrape(gateway)).parsed;
    expect(before.find('portcullis_upstream_restarts_total', { server: 'a' })).toEqual([]);
    expect(before.value('portcullis_stdio_children', { server: 'a' })).toBe(1);
    const pids = processesWithMarker(marker);
    expect(pids.length).toBeGreaterThan(0);
    killPids(pids);
    const after = await waitUntil(async () => {
      const { parsed } = await scrape(gateway);
      return parsed.find('portcullis_upstream_restarts_total', { server: 'a' })[0]?.value === 1 &&
        parsed.value('portcullis_upstream_state', { server: 'a', state: 'ready' }) === 1 && parsed;
    }, 'restart counted and upstream ready again');
    expect(after.value('portcullis_stdio_children', { server: 'a' })).toBe(1);
  });

  it('reports the events and bytes the event store keeps', async () => {
    // streamAfterMs 0: every call of a 2025 session is a resumable SSE stream, so its events are kept.
    const gateway = await startTestGateway(cleanup, { a: stdioServer(newMarker()) }, { eventStore: { streamAfterMs: 0 } });
    expect((await scrape(gateway)).parsed.value('portcullis_event_store_bytes')).toBe(0);
    const { client } = await connectClient(cleanup, gateway.url, '2025');
    await client.callTool({ name: 'a__test_simple_text', arguments: {} });
    const { parsed } = await scrape(gateway);
    expect(parsed.value('portcullis_event_store_events')).toBeGreaterThanOrEqual(1);
    expect(parsed.value('portcullis_event_store_bytes')).toBeGreaterThan(0);
  });

  it('labels a method outside MCP as unknown', async () => {
    const gateway = await startTestGateway(cleanup, {});
    const session = await openRawSession(gateway.url);
    cleanup.add(async () => void (await session.delete()));
    const response = await session.post({ id: 2, method: 'x-made-up/method-4711', params: {} });
    expect(JSON.stringify(response.body)).toContain('-32601');
    const { body, parsed } = await scrape(gateway);
    expect(body).not.toContain('4711');
    expect(parsed.value(`${DURATION}_count`, { mcp_method_name: 'unknown', outcome: 'error' })).toBe(1);
  });

  it('counts a call that waits for a stateless-pool connection', async () => {
    const gateway = await startTestGateway(cleanup, { a: stdioServer(newMarker(), { isolation: 'session' }) }, { statelessPool: { maxPerServer: 1, maxWaitMs: 30_000, cancelGraceMs: 100 } });
    const first = await connectClient(cleanup, gateway.url, '2026');
    const second = await connectClient(cleanup, gateway.url, '2026');
    const abort = new AbortController();
    let progressed: () => void = () => undefined;
    const holding = new Promise<void>((resolve) => (progressed = resolve));
    const slow = first.client
      .callTool({ name: 'a__slow', arguments: { ms: 60_000, steps: 600 } }, { signal: abort.signal, onprogress: () => progressed() })
      .catch(() => 'cancelled');
    await holding; // the only pooled connection is leased to the slow call
    const quick = second.client.callTool({ name: 'a__echo', arguments: { text: 'hi' } });
    await waitUntil(async () => (await scrape(gateway)).parsed.find('portcullis_lease_pool_waits_total', { server: 'a' })[0]?.value === 1, 'the wait counted');
    abort.abort();
    expect(textOf(await quick)).toBe('hi');
    expect(await slow).toBe('cancelled');
  });

  it('counts egress refusals by server and refused address class', async () => {
    // Loopback without allowPrivateNetwork: the guard refuses before any packet is sent.
    const gateway = await startTestGateway(cleanup, { far: { transport: 'streamableHttp', url: 'http://127.0.0.1:9/mcp', mode: 'optional' } });
    const { parsed } = await scrape(gateway);
    expect(parsed.value('portcullis_egress_refusals_total', { server: 'far', reason: 'loopback' })).toBeGreaterThanOrEqual(1);
    expect(parsed.value('portcullis_upstream_state', { server: 'far', state: 'ready' })).toBe(0);
  });
});

describe('servers a client brings, in /metrics', () => {
  it('name no series, during the session or after it ends: their server and tools are unknown', async () => {
    const { gateway } = await startPluginGateway(cleanup, {}, { sessionServers: { allow: true, stdio: true, maxPerSession: 2 } });
    const chosen = `chosen-${seededRandom('metrics-endpoint a client-brought server name').int(36 ** 6, 36 ** 7).toString(36)}`;
    const server = stdioServer(newMarker(), { isolation: 'shared' });
    const init = await rawRequest(gateway.url, {
      headers: { ...MCP_POST_HEADERS },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' }, _meta: { 'portcullis/servers': { [chosen]: { ...server, env: { [MARKER_VAR]: newMarker() } } } } },
      }),
    });
    const id = init.headers['mcp-session-id'] as string;
    expect(init.status).toBe(200);
    const headers = { ...MCP_POST_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
    const post = (message: Record<string, unknown>) => rawRequest(gateway.url, { headers, body: JSON.stringify({ jsonrpc: '2.0', ...message }) });
    await post({ method: 'notifications/initialized' });
    const listed = messagesOf(await post({ id: 2, method: 'tools/list' })).find((m) => 'result' in m) as { result: { tools: Array<{ name: string }> } };
    const own = listed.result.tools.map((t) => t.name).filter((name) => name.includes(chosen));
    expect(own.length).toBeGreaterThan(0);
    for (const [i, name] of own.slice(0, 3).entries()) await post({ id: 10 + i, method: 'tools/call', params: { name, arguments: {} } });
    await post({ id: 20, method: 'prompts/list' });
    const during = await scrape(gateway);
    expect(during.body).not.toContain(chosen);
    expect(during.parsed.value(`${DURATION}_count`, { mcp_method_name: 'tools/call', server: 'unknown', gen_ai_tool_name: 'unknown', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    await rawRequest(gateway.url, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } });
    const after = await scrape(gateway);
    expect(after.body).not.toContain(chosen);
  });
});
