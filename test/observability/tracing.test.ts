/**
 * Traces of a real gateway, exported over OTLP/HTTP (JSON encoding) to a real receiver on
 * 127.0.0.1: a server span per MCP request whose parent is the client's W3C `traceparent` (from
 * `params._meta`, else the HTTP header), a client span per upstream call under it, and that client
 * span's context at a real stdio upstream (`_meta.traceparent`) and a real HTTP upstream (the
 * `traceparent` header and `_meta`). The session id never appears raw. The exporter obeys the
 * egress guard: a loopback collector without `tracing.allowPrivateNetwork` gets nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { spawnUntilReady } from '../fixtures/spawn-until-ready.js';
import { assertBuilt, Cleanup, connectClient, errorOf, httpServer, rawRequest, ROOT, textOf, waitUntil, within } from '../integration/harness.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const SPY_JS = `${ROOT}dist/test/fixtures/spy-server.js`;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_SPAN}-01`;

const perFile = new Cleanup();
const perTest = new Cleanup();
let webUrl: string;
let dir: string;

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-tracing-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  const web = await spawnUntilReady(process.execPath, [SPY_JS, '--http', '--log', join(dir, 'web.jsonl')], { label: 'HTTP spy', ready: /^SPY_READY (\S+)$/ });
  perFile.add(() => web.stop());
  webUrl = web.match;
});
afterEach(() => perTest.run());
afterAll(async () => {
  await perFile.run();
  killAllStdioChildren();
});

async function tracedGateway(receiver: OtlpReceiver, tracing: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<RunningGateway> {
  const config = parseConfig({
    listen: { host: '127.0.0.1', port: 0 },
    tracing: { endpoint: receiver.url, protocol: 'http/json', allowPrivateNetwork: true, ...tracing },
    servers: {
      web: httpServer(webUrl),
      spy: { transport: 'stdio', command: process.execPath, args: [SPY_JS, '--stdio', '--log', join(dir, 'spy.jsonl')] },
    },
  });
  const gateway = await startGateway({ config, logger: silentLogger(), env });
  perTest.add(() => within(gateway.close(), 15_000, 'gateway close'));
  return gateway;
}

async function receiver(): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver();
  perTest.add(() => started.close());
  return started;
}

interface Seen {
  traceparent: string | null;
  traceparentHeader: string | null;
}

async function whoami(client: Client, server: string, extra: { meta?: Record<string, unknown>; headers?: Record<string, string> } = {}): Promise<Seen> {
  const result = await client.callTool(
    { name: `${server}__whoami`, arguments: {}, ...(extra.meta === undefined ? {} : { _meta: extra.meta }) },
    extra.headers === undefined ? undefined : { headers: extra.headers },
  );
  return JSON.parse(textOf(result)) as Seen;
}

const spanIdOf = (traceparent: string | null) => traceparent?.split('-')[2];
const traceIdOf = (traceparent: string | null) => traceparent?.split('-')[1];
const named = (spans: ReceivedSpan[], name: string, kind: number) => spans.filter((s) => s.name === name && s.kind === kind);

describe('traces over OTLP/HTTP', () => {
  it.each([
    ['spy', 'stdio'],
    ['web', 'HTTP'],
  ])('nests the %s upstream call (%s) under the request span, itself under the client traceparent', async (server, wire) => {
    const otlp = await receiver();
    const gateway = await tracedGateway(otlp);
    const { client, transport } = await connectClient(perTest, gateway.url, '2025');
    const seen = await whoami(client, server, { meta: { traceparent: TRACEPARENT } });

    const spans = await otlp.until((all) => named(all, `tools/call ${server}__whoami`, 2).length === 1 && named(all, 'tools/call whoami', 3).length === 1);
    const request = named(spans, `tools/call ${server}__whoami`, 2)[0]!;
    const upstream = named(spans, 'tools/call whoami', 3)[0]!;
    expect(request.traceId).toBe(TRACE_ID);
    expect(request.parentSpanId).toBe(PARENT_SPAN);
    expect(upstream.traceId).toBe(TRACE_ID);
    expect(upstream.parentSpanId).toBe(request.spanId);
    // The upstream saw the gateway's client span as its parent, not the client's span.
    expect(traceIdOf(seen.traceparent)).toBe(TRACE_ID);
    expect(spanIdOf(seen.traceparent)).toBe(upstream.spanId);
    if (wire === 'HTTP') expect(seen.traceparentHeader).toBe(seen.traceparent);
    else expect(seen.traceparentHeader).toBeNull();

    expect(request.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': `${server}__whoami`,
      'gen_ai.operation.name': 'execute_tool',
    });
    expect(typeof request.attributes['jsonrpc.request.id']).toBe('string');
    const tag = request.attributes['mcp.session.id'];
    expect(tag).toMatch(/^[0-9a-f]{12}$/);
    expect(transport.sessionId).toBeDefined();
    expect(JSON.stringify(spans)).not.toContain(transport.sessionId!);
    expect(upstream.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'whoami', 'portcullis.upstream': server });
    expect(request.resource['service.name']).toBe('portcullis');
  });

  it('keeps concurrent requests of two clients in their own traces on one shared upstream connection', async () => {
    const otlp = await receiver();
    const config = parseConfig({
      listen: { host: '127.0.0.1', port: 0 },
      tracing: { endpoint: otlp.url, protocol: 'http/json', allowPrivateNetwork: true },
      servers: { web: httpServer(webUrl, { isolation: 'shared' }) },
    });
    const gateway = await startGateway({ config, logger: silentLogger(), env: {} });
    perTest.add(() => within(gateway.close(), 15_000, 'gateway close'));
    const one = await connectClient(perTest, gateway.url, '2025');
    const two = await connectClient(perTest, gateway.url, '2026');
    const traces = Array.from({ length: 8 }, (_, i) => `${String(i + 1).padStart(2, '0')}${'a'.repeat(30)}`);
    const seen = await Promise.all(
      traces.map((trace, i) => whoami(i % 2 === 0 ? one.client : two.client, 'web', { meta: { traceparent: `00-${trace}-${PARENT_SPAN}-01` } })),
    );
    seen.forEach((s, i) => {
      expect(traceIdOf(s.traceparent)).toBe(traces[i]);
      expect(traceIdOf(s.traceparentHeader)).toBe(traces[i]);
    });
    const spans = await otlp.until((all) => named(all, 'tools/call whoami', 3).length === traces.length);
    for (const trace of traces) {
      const request = spans.filter((s) => s.traceId === trace && s.kind === 2);
      const upstream = spans.filter((s) => s.traceId === trace && s.kind === 3);
      expect(request).toHaveLength(1);
      expect(upstream).toHaveLength(1);
      expect(upstream[0]!.parentSpanId).toBe(request[0]!.spanId);
    }
  });

  it('takes the parent from the traceparent header of a 2026 request that has none in _meta', async () => {
    const otlp = await receiver();
    const gateway = await tracedGateway(otlp, { serviceName: 'gw-under-test' });
    const { client } = await connectClient(perTest, gateway.url, '2026');
    const seen = await whoami(client, 'spy', { headers: { traceparent: TRACEPARENT } });
    const spans = await otlp.until((all) => named(all, 'tools/call spy__whoami', 2).length === 1 && named(all, 'tools/call whoami', 3).length === 1);
    const request = named(spans, 'tools/call spy__whoami', 2)[0]!;
    expect(request.parentSpanId).toBe(PARENT_SPAN);
    expect(request.attributes['mcp.session.id']).toBeUndefined();
    expect(traceIdOf(seen.traceparent)).toBe(TRACE_ID);
    expect(request.resource['service.name']).toBe('gw-under-test');
  });

  it('starts a new trace without a traceparent and marks a refused call as an error', async () => {
    const otlp = await receiver();
    const gateway = await tracedGateway(otlp);
    const { client } = await connectClient(perTest, gateway.url, '2025');
    expect((await errorOf(client.callTool({ name: 'spy__no_such_tool', arguments: {} }))).message).toContain('Unknown tool');
    const spans = await otlp.until((all) => named(all, 'tools/call spy__no_such_tool', 2).length === 1);
    const request = named(spans, 'tools/call spy__no_such_tool', 2)[0]!;
    expect(request.parentSpanId).toBe('');
    expect(request.traceId).not.toBe(TRACE_ID);
    expect(request.status.code).toBe(2);
    expect(request.attributes['error.type']).toBe('UNKNOWN_TOOL');
    expect(request.attributes['rpc.response.status_code']).toBe('-32602');
    // No upstream was called, so no client span.
    expect(named(spans, 'tools/call no_such_tool', 3)).toHaveLength(0);
  });

  it('sends nothing to a loopback collector unless tracing.allowPrivateNetwork is set (egress guard)', async () => {
    const otlp = await receiver();
    const gateway = await tracedGateway(otlp, { allowPrivateNetwork: false });
    const { client } = await connectClient(perTest, gateway.url, '2025');
    await whoami(client, 'spy');
    const refused = await waitUntil(async () => {
      const body = (await rawRequest(new URL('/metrics', gateway.url).href, { method: 'GET' })).body;
      const line = body.split('\n').find((l) => l.startsWith('portcullis_egress_refusals_total{server="otlp-traces"'));
      return line !== undefined && Number(line.split(' ').pop()) >= 1 ? line : undefined;
    }, 'an egress refusal of the exporter');
    expect(refused).toContain('reason="loopback"');
    expect(otlp.exports).toHaveLength(0);
  });

  it('still shuts down when the collector takes the export and never answers', async () => {
    const silent = await startOtlpReceiver({ hang: true });
    perTest.add(() => silent.close());
    // An export may take a minute; the shutdown still waits a few seconds at most.
    const gateway = await tracedGateway(silent, { timeoutMs: 60_000 });
    const { client } = await connectClient(perTest, gateway.url, '2025');
    await whoami(client, 'spy');
    await within(gateway.close(), 15_000, 'gateway close with a silent collector');
    expect(silent.exports.length).toBeGreaterThanOrEqual(1);
  });

  it('is off without a tracing block or OTEL_* variables: the client traceparent passes through untouched', async () => {
    const otlp = await receiver();
    const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers: { web: httpServer(webUrl) } });
    const gateway = await startGateway({ config, logger: silentLogger(), env: {} });
    perTest.add(() => within(gateway.close(), 15_000, 'gateway close'));
    const { client } = await connectClient(perTest, gateway.url, '2025');
    const seen = await whoami(client, 'web', { meta: { traceparent: TRACEPARENT } });
    expect(seen.traceparent).toBe(TRACEPARENT);
    expect(seen.traceparentHeader).toBeNull();
    await gateway.close();
    expect(otlp.exports).toHaveLength(0);
  });

  it('turns on from OTEL_EXPORTER_OTLP_ENDPOINT and sends OTEL_EXPORTER_OTLP_HEADERS', async () => {
    const otlp = await receiver();
    const base = otlp.url.replace(/\/v1\/traces$/, '');
    const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, tracing: { allowPrivateNetwork: true }, servers: { web: httpServer(webUrl) } });
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: base, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=s3cr%3Dt' };
    const gateway = await startGateway({ config, logger: silentLogger(), env });
    perTest.add(() => within(gateway.close(), 15_000, 'gateway close'));
    const { client } = await connectClient(perTest, gateway.url, '2025');
    await client.listTools();
    await otlp.until((all) => named(all, 'tools/list', 2).length >= 1);
    expect(otlp.exports[0]?.headers['x-api-key']).toBe('s3cr=t');
  });

  it('exports protobuf by default (OTLP/HTTP binary encoding)', async () => {
    const otlp = await receiver();
    const gateway = await tracedGateway(otlp, { protocol: undefined });
    const { client } = await connectClient(perTest, gateway.url, '2025');
    await whoami(client, 'spy');
    await gateway.close(); // flushes what is waiting
    expect(otlp.exports.length).toBeGreaterThanOrEqual(1);
    expect(otlp.exports.every((e) => e.contentType === 'application/x-protobuf')).toBe(true);
    // Span names are length-delimited strings in the message: both spans are in it.
    const bytes = Buffer.concat(otlp.exports.map((e) => e.body));
    expect(bytes.includes(Buffer.from('tools/call spy__whoami'))).toBe(true);
    expect(bytes.includes(Buffer.from('tools/call whoami'))).toBe(true);
  });
});
