/**
 * Session2025 on its own (one 2025-era session over its Streamable HTTP transport) in front of
 * a real registry of stdio fixture children: duplicate in-flight ids refused and freed when
 * answered or cancelled, idleness that follows open exchanges, and a close that gives back the
 * session's budget ticket and reaps the children it spawned.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Session2025 } from '../../src/inbound/session-2025.js';
import { SessionAdmission, type SessionTicket } from '../../src/session/session-admission.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { waitUntil } from '../integration/harness/wait.js';
import { deps, logger, serverConfigs } from '../upstream/fixture-link.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';

const URL_ = 'http://127.0.0.1/mcp';
let registry: UpstreamRegistry;
const sessions: Session2025[] = [];

beforeAll(async () => {
  assertBuilt();
  registry = new UpstreamRegistry({
    servers: serverConfigs({ fx: stdioServer(newMarker(), { isolation: 'session' }) }),
    statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
    maxSessionChildren: 4,
    deps,
    logger,
  });
  await registry.start();
});
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.close()));
});
afterAll(() => registry.close());

async function ticketOf(admission: SessionAdmission): Promise<SessionTicket> {
  const admitted = await admission.admitInitialize(undefined);
  if (!admitted.ok) throw admitted.error;
  return admitted.ticket;
}

/** A started, initialised session. */
async function openSession(ticket: SessionTicket | Promise<SessionTicket> = ticketOf(new SessionAdmission({ max: 10, maxPerPrincipal: 10, initializePerMinute: 100, logger }))) {
  const session = new Session2025({
    principal: undefined,
    name: 'portcullis-test',
    version: '0.0.0',
    capabilities: { tools: { listChanged: true } },
    instructions: undefined,
    scope: { registry, servers: ServerRoster.of(['fx']), catalogue: { separator: '__', toolFilter: () => true }, logger },
    ticket: await ticket,
    logger,
    streamAfterMs: 1_000,
    onInitialized: () => undefined,
    onClosed: () => undefined,
  });
  sessions.push(session);
  await session.start();
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
  expect((await session.handle(request(init), init)).status).toBe(200);
  expect(session.initialised).toBe(true);
  const send = (message: Record<string, unknown>) => {
    const body = { jsonrpc: '2.0', ...message };
    return session.handle(request(body, session.id), body);
  };
  expect((await send({ method: 'notifications/initialized' })).status).toBe(202);
  return { session, send };
}

function request(body: unknown, sessionId?: string): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' }),
    },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC response in an answer, whether it came as one JSON body or as an SSE stream. */
async function answerOf(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return JSON.parse(text) as Record<string, unknown>;
  const messages = text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 'data: '.length)
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
  const answer = messages.find((m) => 'result' in m || 'error' in m);
  if (answer === undefined) throw new Error('no response in the SSE answer');
  return answer;
}

const echo = (id: number, text: string) => ({ id, method: 'tools/call', params: { name: 'fx__echo', arguments: { text } } });
const slow = (id: number) => ({ id, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 300, steps: 3 }, _meta: { progressToken: `p${id}` } } });

describe('Session2025', () => {
  it('refuses a second request under an id still in flight, and frees the id once it is answered', async () => {
    const { send } = await openSession();
    const first = send(slow(7)); // the id is taken before the transport sees the request
    const second = await send(echo(7, 'too soon'));
    expect(second.status).toBe(400);
    expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(/already in flight/);
    const answered = await first;
    expect(answered.status).toBe(200);
    await answered.text(); // the whole SSE answer, result included
    const again = await send(echo(7, 'now'));
    expect(await answerOf(again)).toMatchObject({ id: 7, result: { content: [{ text: 'now' }] } });
  });

  it('frees the id of a request the client cancelled', async () => {
    const { send } = await openSession();
    const pending = await send(slow(8)); // its SSE answer has started: the call is in flight
    expect((await send({ method: 'notifications/cancelled', params: { requestId: 8, reason: 'test' } })).status).toBe(202);
    await pending.text(); // the cancelled call's stream ends without a result
    const again = await send(echo(8, 'after cancel'));
    expect(await answerOf(again)).toMatchObject({ id: 8, result: { content: [{ text: 'after cancel' }] } });
  });

  it('is idle only while no exchange is open', async () => {
    const { session, send } = await openSession();
    expect(session.idleSince()).toBeTypeOf('number');
    const call = send(slow(9));
    expect(session.idleSince()).toBeUndefined();
    await (await call).text();
    await waitUntil(() => session.idleSince() !== undefined, 'the session is idle again');
  });

  it('gives back its budget ticket and reaps the child it spawned when it closes', async () => {
    const admission = new SessionAdmission({ max: 1, maxPerPrincipal: 1, initializePerMinute: 100, logger });
    const quota = registry.entry('fx').sessionChildren!;
    const before = quota.live;
    const { session, send } = await openSession(ticketOf(admission));
    expect((await admission.admitInitialize(undefined)).ok).toBe(false);
    expect(await answerOf(await send(echo(1, 'spawn')))).toMatchObject({ result: { content: [{ text: 'spawn' }] } });
    expect(quota.live).toBe(before + 1);
    await session.close();
    const next = await admission.admitInitialize(undefined);
    expect(next.ok).toBe(true);
    if (next.ok) next.ticket.release();
    await waitUntil(() => quota.live === before, 'the session child was reaped');
  });
});
