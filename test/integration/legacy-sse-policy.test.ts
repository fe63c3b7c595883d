/**
 * HTTP+SSE sessions under the gateway's rules: bound to the principal that opened them, counted
 * against the session cap, expired when idle (a stream that never initialises), logged without
 * their URL token; and the transport off, in both directions, under the strict policy.
 */
import { randomUUID } from 'node:crypto';
import { Client, SSEClientTransport } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { parseConfig } from '../../src/config/load.js';
import { leakedIn } from '../security/leaks.js';
import {
  assertBuilt,
  Cleanup,
  gatewayConfig,
  startTestGateway,
  startUpstreams,
  textOf,
  waitUntil,
  within,
  type Upstreams,
} from './harness.js';
import { announcedEndpoint, openRawSse, openRawSseSession, postMessage } from './harness/raw-sse.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const ALICE = `alice-${randomUUID()}`;
const BOB = `bob-${randomUUID()}`;
const logLines: string[] = [];
let upstreams: Upstreams;
let gateway: RunningGateway;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  assertBuilt();
  upstreams = await startUpstreams(perFile);
  const config = gatewayConfig(
    { stdio: upstreams.servers().stdio },
    {
      auth: { kind: 'bearer', tokens: [{ principal: 'alice', env: 'IT_SSE_ALICE' }, { principal: 'bob', env: 'IT_SSE_BOB' }] },
      sessions: { max: 3, idleTimeoutMs: 400 },
    },
  );
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });
  gateway = await startGateway({ config, logger, env: { ...process.env, IT_SSE_ALICE: ALICE, IT_SSE_BOB: BOB } });
  perFile.add(() => within(gateway.close(), 15_000, 'gateway close'));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const sseUrl = () => `${gateway.url}/sse`;

/** An initialised raw HTTP+SSE session as `token`'s principal, hung up after the test. */
async function sessionAs(token: string) {
  const session = await openRawSseSession(sseUrl(), bearer(token));
  perTest.add(() => session.stream.close());
  return session;
}

describe('authentication and principal binding', () => {
  it('refuses to open a stream without credentials', async () => {
    const stream = await openRawSse(sseUrl());
    expect(stream.status).toBe(401);
  });

  it('serves the SDK SSE client that sends its bearer token on the stream and on every POST', async () => {
    const client = new Client({ name: 'sse-auth', version: '1.0.0' });
    const transport = new SSEClientTransport(new URL(sseUrl()), { requestInit: { headers: bearer(ALICE) } });
    await within(client.connect(transport), 15_000, 'SSE connect');
    perTest.add(() => client.close().catch(() => undefined));
    expect(textOf(await client.callTool({ name: 'stdio__echo', arguments: { text: 'alice' } }))).toBe('alice');
  });

  it('answers another principal’s POST with 404, exactly as an unknown session, and nothing reaches the session', async () => {
    const { stream, endpoint } = await sessionAs(ALICE);
    const asBob = await postMessage(endpoint, { id: 'x', method: 'tools/call', params: { name: 'stdio__echo', arguments: { text: 'bob' } } }, bearer(BOB));
    const unknown = await postMessage(`${gateway.url}/messages?sessionId=${randomUUID()}`, { id: 'x', method: 'ping' }, bearer(BOB));
    expect(asBob.status).toBe(404);
    expect(asBob.body).toBe(unknown.body);
    const asAlice = await postMessage(endpoint, { id: 'a', method: 'ping' }, bearer(ALICE));
    expect(asAlice.status).toBe(202);
    await stream.waitForMessage((m) => m.id === 'a', 'alice’s ping');
    expect(stream.messages().some((m) => m.id === 'x')).toBe(false);
  });
});

describe('the session cap and idle expiry', () => {
  it('refuses a stream past the cap with 503, and admits one again once a session has gone', async () => {
    const open = await Promise.all([sessionAs(ALICE), sessionAs(ALICE), sessionAs(BOB)]);
    const refused = await openRawSse(sseUrl(), bearer(ALICE));
    expect(refused.status).toBe(503);
    expect(refused.body()).toContain('Too many sessions');
    open[0]!.stream.close();
    await waitUntil(async () => {
      const next = await openRawSse(sseUrl(), bearer(ALICE));
      perTest.add(() => next.close());
      return next.status === 200;
    }, 'a stream admitted again');
  });

  it('expires a stream that never initialises, and keeps an initialised one whose stream is open', async () => {
    // Sessions of the test before may still be closing: wait for room.
    await waitUntil(async () => {
      const probe = await openRawSse(sseUrl(), bearer(ALICE));
      probe.close();
      return probe.status === 200;
    }, 'room for two sessions');
    const { stream: kept, post } = await sessionAs(ALICE);
    const idle = await openRawSse(sseUrl(), bearer(ALICE));
    perTest.add(() => idle.close());
    expect(idle.status).toBe(200);
    const endpoint = await announcedEndpoint(idle, sseUrl());
    // The idle timeout is 400 ms; the initialised session was last used before the idle one opened.
    await waitUntil(() => idle.ended(), 'the idle stream to be ended');
    expect((await postMessage(endpoint, { id: 1, method: 'ping' }, bearer(ALICE))).status).toBe(404);
    expect(kept.ended()).toBe(false);
    expect((await post({ id: 'later', method: 'ping' })).status).toBe(202);
    await kept.waitForMessage((m) => m.id === 'later', 'the ping answered');
  });
});

describe('logs', () => {
  it('never carry the token of the message URL', async () => {
    const { stream, endpoint, post } = await sessionAs(ALICE);
    await post({ id: 1, method: 'tools/call', params: { name: 'stdio__echo', arguments: { text: 'logged?' } } });
    await stream.waitForMessage((m) => m.id === 1, 'the call');
    await postMessage(endpoint, { id: 2, method: 'ping' }, bearer(BOB));
    stream.close();
    await waitUntil(() => logLines.some((line) => line.includes('"session closed"')), 'the session closed line');
    const token = new URL(endpoint).searchParams.get('sessionId')!;
    expect(logLines.join('\n')).toContain('"rpc":"tools/call"');
    expect(leakedIn(logLines.join('\n'), [{ name: 'sessionId token', value: token, random: token.replace(/-/g, '') }])).toEqual([]);
    expect(logLines.join('\n')).not.toContain(token.replace(/-/g, '').slice(0, 12));
  });
});

describe('the strict policy', () => {
  it('answers the HTTP+SSE routes with 404 naming the policy field', async () => {
    const strict = await startTestGateway(perTest, { stdio: upstreams.servers().stdio }, { policy: 'strict' });
    for (const url of [`${strict.url}/sse`, `${strict.url}/servers/stdio/sse`]) {
      const stream = await openRawSse(url);
      expect(stream.status).toBe(404);
      expect(stream.body()).toContain('legacySse.inbound');
    }
    expect((await postMessage(`${strict.url}/messages?sessionId=${randomUUID()}`, { id: 1, method: 'ping' })).status).toBe(404);
  });

  it('refuses an sse server entry, naming the server and the field', () => {
    let error: unknown;
    try {
      parseConfig({ policy: 'strict', servers: { old: { transport: 'sse', url: 'https://mcp.example.com/sse' } } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toContain('servers.old.transport: the policy does not allow "sse" upstreams (policy legacySse.upstream is false)');
    expect((error as ConfigError).message).not.toContain('mcp.example.com');
  });
});
