/**
 * Secrets never appear in logs, errors or diagnostics (DESIGN.md §3, §7; STYLE.md "Logs"): a
 * gateway logging at `trace`, wired as the CLI wires it (`Redactor` over `configSecrets`), holds
 * unique secrets in an HTTP upstream's `headers` and `envHeaders`, a bearer auth token and stdio
 * servers' `env`. SDK clients of both eras list, call, fail and miss; raw requests bring bad
 * tokens and unknown sessions; upstreams fail (nothing listening, a 401 that echoes the key back)
 * and a careless stdio child prints its token to stderr and stdout. No captured log line and
 * nothing the clients received may carry a secret in any form (see `leaks.ts`). A header tap
 * in front of the HTTP fixture proves the upstream secrets were really in use.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSecrets } from '../../src/config/secrets.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { createLogger, Redactor } from '../../src/observability/logger.js';
import {
  assertBuilt,
  Cleanup,
  ERAS,
  errorOf,
  gatewayConfig,
  httpServer,
  initializeBody,
  killPids,
  MCP_POST_HEADERS,
  MARKER_VAR,
  newMarker,
  processesWithMarker,
  rawRequest,
  startHttpFixture,
  waitUntil,
  within,
  type Era,
  type RawResponse,
} from '../integration/harness.js';
import { startHeaderTap, type HeaderTap } from './header-tap.js';
import { findLeaks, LEAKY_STDIO_JS, newSecret } from './leaks.js';

const SECRETS = {
  header: newSecret('headers.X-Api-Key', 'xak/'),
  envHeader: newSecret('envHeaders.Authorization', 'eh+'),
  bearer: newSecret('auth bearer token', 'bt-'),
  stdio: newSecret('stdio env API_TOKEN', 'p@ss"w\\ord:'),
  cut: newSecret('stdio env API_TOKEN (cut lines)', 'cut-'),
};
/** Every secret but the one the child prints across the gateway's line limits (tested apart). */
const WHOLE = [SECRETS.header, SECRETS.envHeader, SECRETS.bearer, SECRETS.stdio];
const ENV = { SEC_UPSTREAM_AUTH: `Bearer ${SECRETS.envHeader.value}`, SEC_CLIENT_TOKEN: SECRETS.bearer.value };

const perFile = new Cleanup();
const marker = newMarker();
const logLines: string[] = [];
/** Everything an HTTP client of this file received: `[what, text]`, bodies growing as they stream. */
const received: Array<{ source: string; text: string }> = [];
let gateway: RunningGateway;
let tap: HeaderTap;

/** Listens on 127.0.0.1, answers every request 401 quoting the API key it was sent (a careless upstream). */
async function startEchoingUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    const key = String(req.headers['x-api-key'] ?? '');
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer error="invalid_token", error_description="bad key ${key}"` });
    res.end(JSON.stringify({ error: `api key ${key} is not valid`, headers: req.headers }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const withSecretHeaders = (url: string, extra: Record<string, unknown> = {}) =>
  httpServer(url, { headers: { 'X-Api-Key': SECRETS.header.value }, envHeaders: { Authorization: 'SEC_UPSTREAM_AUTH' }, ...extra });
const leakyStdio = (secret: string, ...flags: string[]) => ({
  transport: 'stdio',
  command: process.execPath,
  args: [LEAKY_STDIO_JS, ...flags],
  env: { [MARKER_VAR]: marker, API_TOKEN: secret },
});

beforeAll(async () => {
  assertBuilt();
  perFile.add(() => killPids(processesWithMarker(marker)));
  const fixture = await startHttpFixture();
  perFile.add(() => fixture.stop());
  tap = await startHeaderTap(fixture.match);
  perFile.add(() => tap.close());
  const echoing = await startEchoingUpstream();
  perFile.add(() => new Promise<void>((resolve) => (echoing.closeAllConnections(), echoing.close(() => resolve()))));
  const servers = {
    http: withSecretHeaders(tap.url),
    down: withSecretHeaders(`http://127.0.0.1:${await closedPort()}/mcp`, { mode: 'optional' }),
    echoing: withSecretHeaders(`http://127.0.0.1:${(echoing.address() as AddressInfo).port}/mcp`, { mode: 'optional' }),
    leaky: leakyStdio(SECRETS.stdio.value),
    cut: leakyStdio(SECRETS.cut.value, '--cut'),
  };
  const config = gatewayConfig(servers, { auth: { kind: 'bearer', tokens: [{ principal: 'alice', env: 'SEC_CLIENT_TOKEN' }] } });
  const env = { ...process.env, ...ENV };
  const redactor = new Redactor(configSecrets(config, env));
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void logLines.push(line) }, redactor });
  gateway = await startGateway({ config, logger, env });
  perFile.add(() => within(gateway.close(), 15_000, 'gateway close'));
  for (const era of ERAS) await driveClient(era);
  await driveRaw();
  // Wait for the evidence that every leaky path was taken before judging the log.
  await waitUntil(() => logged('stdio server stderr').length >= 2 && logged('non-JSON line on stdout').length >= 2, 'child output logged');
  await waitUntil(() => logged('"server":"down"').length > 0 && logged('"server":"echoing"').length > 0, 'upstream failures logged');
}, 30_000);
afterAll(() => perFile.run());

/** Captured log lines containing `text`. */
const logged = (text: string) => logLines.filter((line) => line.includes(text));
/** Captured log lines of the `cut` server containing `text`. */
const cutLines = (text: string) => logged(text).filter((line) => line.includes('"server":"cut"'));

/** A fetch for the SDK transport that records each response's status, headers and (streamed) body. */
function recordingFetch(era: Era) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(url, init);
    const source = `${era} ${init?.method ?? 'GET'} ${String(url)} → ${response.status}`;
    const headers: string[] = [];
    response.headers.forEach((value, name) => headers.push(`${name}: ${value}`));
    received.push({ source: `${source} headers`, text: headers.join('\n') });
    const body = response.clone().body;
    if (body !== null) {
      const record = { source: `${source} body`, text: '' };
      received.push(record);
      void (async () => {
        const reader = body.getReader();
        const decoder = new TextDecoder();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          record.text += decoder.decode(chunk.value, { stream: true });
        }
      })().catch(() => undefined);
    }
    return response;
  };
}

/** One SDK client's full session: list, calls that work, a tool error, unknown and unavailable tools. */
async function driveClient(era: Era): Promise<void> {
  const client = new Client({ name: `secrets-${era}`, version: '1.0.0' }, era === '2026' ? { versionNegotiation: { mode: 'auto' } } : {});
  const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
    requestInit: { headers: { Authorization: `Bearer ${SECRETS.bearer.value}` } },
    fetch: recordingFetch(era),
  });
  await within(client.connect(transport), 15_000, `${era} client connect`);
  try {
    await client.listTools();
    for (const server of ['http', 'leaky', 'cut']) await client.callTool({ name: `${server}__echo`, arguments: { text: 'hello' } });
    await client.callTool({ name: 'http__test_error_handling', arguments: {} });
    await client.callTool({ name: 'leaky__test_error_handling', arguments: {} });
    await errorOf(client.callTool({ name: 'nowhere__nothing', arguments: {} }));
    await errorOf(client.callTool({ name: 'echoing__echo', arguments: {} }));
    if (era === '2025') await errorOf(client.callTool({ name: 'leaky__crash', arguments: {} }));
  } finally {
    if (transport.sessionId !== undefined) await within(transport.terminateSession(), 5_000, 'DELETE').catch(() => undefined);
    await within(client.close(), 5_000, 'client close').catch(() => undefined);
  }
}

function recordRaw(what: string, response: RawResponse): void {
  received.push({ source: `${what} → ${response.status}`, text: `${JSON.stringify(response.headers)}\n${response.body}` });
}

/** Bad and stray requests: wrong tokens (one of them an upstream's secret), unknown sessions, diagnostics. */
async function driveRaw(): Promise<void> {
  const token = { authorization: `Bearer ${SECRETS.bearer.value}` };
  const post = (headers: Record<string, string>, body = initializeBody()) => rawRequest(gateway.url, { headers: { ...MCP_POST_HEADERS, ...headers }, body });
  recordRaw('wrong token', await post({ authorization: 'Bearer wrong-token-0123456789' }));
  recordRaw("an upstream's secret as the token", await post({ authorization: `Bearer ${SECRETS.envHeader.value}` }));
  recordRaw('no token', await post({}));
  const stray = { ...token, 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': '2025-11-25' };
  recordRaw('GET unknown session', await rawRequest(gateway.url, { method: 'GET', headers: { accept: 'text/event-stream', ...stray } }));
  recordRaw('POST unknown session', await post(stray, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })));
  recordRaw('GET /readyz', await rawRequest(gateway.url.replace(/\/mcp$/, '/readyz'), { method: 'GET', headers: token }));
}

describe('a full session logged at trace', () => {
  it('really sent the upstream secrets (the header tap saw them)', () => {
    const sent = tap.requests.filter((r) => r.method === 'POST').map((r) => new Map(r.headers));
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((h) => h.get('x-api-key') === SECRETS.header.value)).toBe(true);
    expect(sent.every((h) => h.get('authorization') === ENV.SEC_UPSTREAM_AUTH)).toBe(true);
  });

  it('logged the paths that could leak: child output, upstream failures, refused tokens', () => {
    expect(logged('[redacted]').length).toBeGreaterThan(0);
    expect(logged('stdio server stderr').some((line) => line.includes('API_TOKEN=[redacted]'))).toBe(true);
    expect(logged('request refused').length).toBeGreaterThanOrEqual(3);
    // The cut lines below exist, so the known-bug tests fail on the leak, not on a missing line.
    expect(cutLines('stdio server stderr').some((line) => line.includes('…[truncated]'))).toBe(true);
    expect(cutLines('non-JSON line on stdout').length).toBeGreaterThan(0);
  });

  it('writes no secret to any log line', () => {
    expect(findLeaks(logLines.map((line, i) => [`log line ${i}`, line] as const), WHOLE)).toEqual([]);
  });

  it('sends no secret to any client, in a header or a body', () => {
    expect(received.filter((r) => r.text.includes('"hello"')).length).toBeGreaterThanOrEqual(2);
    expect(findLeaks(received.map((r) => [r.source, r.text] as const), Object.values(SECRETS))).toEqual([]);
  });
});

// A line cut for the log can cut a secret in two; the head left at the cut must be masked too
// (found by this test: Redactor.redactCut now masks a trailing prefix of any secret).
describe('a secret the gateway cuts while logging a long line', () => {
  it('leaves no fragment of it in a truncated stderr line', () => {
    const lines = cutLines('stdio server stderr');
    expect(findLeaks(lines.map((line, i) => [`stderr line ${i}`, line] as const), [SECRETS.cut])).toEqual([]);
  });

  it('leaves no fragment of it in the preview of a non-JSON stdout line', () => {
    const lines = cutLines('non-JSON line on stdout');
    expect(findLeaks(lines.map((line, i) => [`stdout noise line ${i}`, line] as const), [SECRETS.cut])).toEqual([]);
  });
});
