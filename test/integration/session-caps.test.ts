/**
 * The session caps of a real gateway hold gateway-wide: `sessions.max` counts the sessions of
 * the aggregate endpoint and of every per-server side channel together; each authenticated
 * principal has its own quota (`sessions.maxPerPrincipal`), so one caller filling it leaves
 * another untouched; and `initialize` is rate-limited per principal (429 with Retry-After).
 * Every refusal is a JSON-RPC error with a stable code, and a freed place is usable again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import {
  assertBuilt,
  Cleanup,
  gatewayConfig,
  initializeBody,
  killPids,
  MCP_POST_HEADERS,
  newMarker,
  openRawSession,
  processesWithMarker,
  rawRequest,
  sideChannelUrl,
  startTestGateway,
  stdioServer,
  within,
  type RawResponse,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const marker = newMarker();
const ALICE = `alice-${randomUUID()}`;
const BOB = `bob-${randomUUID()}`;
const BEARER_AUTH = {
  kind: 'bearer',
  tokens: [
    { principal: 'alice', env: 'IT_CAPS_ALICE' },
    { principal: 'bob', env: 'IT_CAPS_BOB' },
  ],
};

beforeAll(() => {
  assertBuilt();
  perFile.add(() => killPids(processesWithMarker(marker)));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

/** A gateway with bearer auth for alice and bob over one stdio fixture, with `sessions` limits. */
async function authGateway(sessions: Record<string, unknown>) {
  const config = gatewayConfig({ fx: stdioServer(marker) }, { auth: BEARER_AUTH, sessions });
  const gateway = await startGateway({ config, logger: silentLogger(), env: { ...process.env, IT_CAPS_ALICE: ALICE, IT_CAPS_BOB: BOB } });
  perTest.add(() => within(gateway.close(), 15_000, 'gateway close'));
  return gateway;
}

/** A bare `initialize` (optionally with a bearer token); the session it opens is ended by `perTest`. */
async function initialize(url: string, token?: string): Promise<RawResponse> {
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const response = await rawRequest(url, { headers: { ...MCP_POST_HEADERS, ...auth }, body: initializeBody() });
  const id = response.headers['mcp-session-id'];
  if (typeof id === 'string') perTest.add(() => endSession(url, id, token).then(() => undefined));
  return response;
}

function endSession(url: string, id: string, token?: string): Promise<RawResponse> {
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  return rawRequest(url, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25', ...auth } });
}

/** The JSON-RPC error of a refused request, with the gateway's stable code. */
function refusal(response: RawResponse): { code: number; message: string; data?: { code?: string } } {
  const body = JSON.parse(response.body) as { error?: { code: number; message: string; data?: { code?: string } } };
  expect(body.error).toBeDefined();
  return body.error!;
}

describe('sessions.max', () => {
  it('counts the aggregate endpoint and the per-server side channels together', async () => {
    const gateway = await startTestGateway(perTest, { fx: stdioServer(marker) }, { sessions: { max: 3 } });
    const side = sideChannelUrl(gateway.url, 'fx');
    const aggregate = await openRawSession(gateway.url);
    perTest.add(() => aggregate.delete().then(() => undefined));
    expect((await initialize(side)).status).toBe(200);
    expect((await initialize(side)).status).toBe(200);

    for (const url of [gateway.url, side]) {
      const refused = await initialize(url);
      expect(refused.status).toBe(503);
      expect(refused.headers['mcp-session-id']).toBeUndefined();
      expect(refusal(refused)).toMatchObject({ code: -32001, message: 'Too many sessions; try again later', data: { code: 'SESSION_LIMIT' } });
    }

    // A session that ends gives its place back, to any endpoint.
    expect((await aggregate.delete()).status).toBe(200);
    expect((await initialize(side)).status).toBe(200);
    expect((await initialize(gateway.url)).status).toBe(503);
  });
});

describe('sessions.maxPerPrincipal', () => {
  it('refuses a principal past its quota with 429, while another principal still opens sessions', async () => {
    const gateway = await authGateway({ max: 10, maxPerPrincipal: 2 });
    const first = await initialize(gateway.url, ALICE);
    expect(first.status).toBe(200);
    expect((await initialize(sideChannelUrl(gateway.url, 'fx'), ALICE)).status).toBe(200);

    const refused = await initialize(gateway.url, ALICE);
    expect(refused.status).toBe(429);
    expect(refusal(refused)).toMatchObject({ code: -32600, data: { code: 'PRINCIPAL_SESSION_LIMIT' } });

    expect((await initialize(gateway.url, BOB)).status).toBe(200);
    expect((await initialize(gateway.url, BOB)).status).toBe(200);
    expect((await initialize(gateway.url, BOB)).status).toBe(429);

    // Bob cannot end Alice's session (it is unknown to him), Alice can, and gets her place back.
    const aliceSession = first.headers['mcp-session-id'] as string;
    expect((await endSession(gateway.url, aliceSession, BOB)).status).toBe(404);
    expect((await initialize(gateway.url, ALICE)).status).toBe(429);
    expect((await endSession(gateway.url, aliceSession, ALICE)).status).toBe(200);
    expect((await initialize(gateway.url, ALICE)).status).toBe(200);
  });
});

describe('sessions.initializePerMinute', () => {
  it('answers a principal initializing too fast with 429, Retry-After and RATE_LIMITED, and no session', async () => {
    const gateway = await authGateway({ initializePerMinute: 2 });
    expect((await initialize(gateway.url, ALICE)).status).toBe(200);
    expect((await initialize(gateway.url, ALICE)).status).toBe(200);

    const limited = await initialize(gateway.url, ALICE);
    expect(limited.status).toBe(429);
    expect(limited.headers['mcp-session-id']).toBeUndefined();
    // Two a minute: the next token is at most 30 s away.
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(refusal(limited)).toMatchObject({ code: -32600, data: { code: 'RATE_LIMITED' } });
    expect(refusal(limited).message).toMatch(/^Too many initialize requests; retry after \d+ s$/);

    // The limit is Alice's: Bob initializes as if she were not there.
    expect((await initialize(gateway.url, BOB)).status).toBe(200);
  });
});
