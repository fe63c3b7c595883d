/**
 * What the gateway writes to its log while 2026-07-28 clients use it, at `trace`, through a real
 * gateway with bearer auth and real stdio children: no bearer token and no session id a client
 * sent ever appears in a log line or in any answer, whatever the request (served, refused at the
 * ladder, hung up, a listen, an unknown tool); and a log line is bounded whatever the client
 * puts in the fields it names (`rpc`, `name`), so a client cannot make each request cost the log
 * as much as its body.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { findLeaks, newSecret } from '../security/leaks.js';
import { assertBuilt, bearerPrincipals, Cleanup, gatewayConfig, newMarker, rawRequest, stdioServer, waitUntil, within } from './harness.js';
import { envelope2026, headers2026, messagesOfAnswer, post, request2026 } from './harness/raw-2026.js';

const cleanup = new Cleanup();
const principals = bearerPrincipals('alice');
const logLines: string[] = [];
/** Everything the clients of this file received, `[what, text]`. */
const received: Array<[string, string]> = [];
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });
  gateway = await startGateway({
    config: gatewayConfig({ fx: stdioServer(newMarker(), { isolation: 'shared' }) }, { auth: principals.auth }),
    logger,
    env: { ...process.env, ...principals.env },
  });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
});
afterAll(() => cleanup.run());

const token = principals.headers('alice').Authorization!.slice('Bearer '.length);
const SECRETS = [
  { name: 'alice bearer token', value: token, random: token.slice('alice-'.length).replace(/-/g, '') },
  newSecret('a wrong bearer token', 'wrong-'),
  newSecret('a session id a 2026 client sent', 'sess-'),
];
const auth = { authorization: `Bearer ${token}`, 'mcp-session-id': SECRETS[2]!.value };

async function send(what: string, method: string, params: Record<string, unknown>, extra: Record<string, string> = {}) {
  const answer = await rawRequest(gateway.url, { headers: { ...headers2026(method, params), ...auth, ...extra }, body: JSON.stringify(request2026(randomUUID(), method, params)) });
  received.push([what, `${JSON.stringify(answer.headers)}\n${answer.body}`]);
  return answer;
}

describe('2026 requests logged at trace', () => {
  it('write no bearer token nor session id anywhere: not in a log line, not in an answer', async () => {
    expect((await send('a call', 'tools/call', { name: 'fx__echo', arguments: { text: 'hello' } })).status).toBe(200);
    await send('an unknown tool', 'tools/call', { name: 'fx__nope', arguments: {} });
    await send('a list', 'tools/list', {});
    await send('a removed method', 'ping', {});
    await send('a header mismatch', 'tools/call', { name: 'fx__echo', arguments: { text: 'x' } }, { 'mcp-name': 'fx__other' });
    await send('an unsupported revision', 'tools/list', {}, { 'mcp-protocol-version': '2099-01-01' });
    const wrong = await send('a wrong token', 'tools/list', {}, { authorization: `Bearer ${SECRETS[1]!.value}` });
    expect(wrong.status).toBe(401);
    // A listen, and a call hung up mid-stream.
    const listen = post(gateway.url, request2026('l', 'subscriptions/listen', { notifications: { toolsListChanged: true } }), { ...headers2026('subscriptions/listen'), ...auth });
    const listening = await listen.answer;
    await listening.waitForMessage((m) => m.method === 'notifications/subscriptions/acknowledged', 'the acknowledgement');
    received.push(['a listen', listening.body()]);
    listen.hangUp();
    const slowParams = { name: 'fx__slow', arguments: { ms: 30_000, steps: 300 } };
    const slow = post(gateway.url, request2026('s', 'tools/call', slowParams, envelope2026({ progressToken: 'p' })), { ...headers2026('tools/call', slowParams), ...auth });
    const streaming = await slow.answer;
    await streaming.waitForMessage((m) => m.method === 'notifications/progress', 'progress');
    received.push(['a hung-up call', streaming.body()]);
    slow.hangUp();
    await waitUntil(() => logLines.some((line) => line.includes('"rpc":"tools/call"') && line.includes('"outcome":"error"')), 'the hung-up call’s rpc line');

    expect(logLines.some((line) => line.includes('"rpc":"tools/call"'))).toBe(true);
    expect(findLeaks(logLines.map((line, i) => [`log line ${i}`, line] as const), SECRETS)).toEqual([]);
    expect(findLeaks(received, SECRETS)).toEqual([]);
  });

  it('keep each line bounded whatever a client puts in the fields it names', async () => {
    const before = logLines.length;
    // No Mcp-Name is required for a name that is not a string: the body alone carries it.
    const hugeName = { padding: 'n'.repeat(200_000) };
    const answer = await send('an object name', 'tools/call', { name: hugeName, arguments: {} });
    expect(answer.json().error).toMatchObject({ code: -32602 });
    const longName = 'fx__'.concat('l'.repeat(12_000));
    await send('a long name', 'tools/call', { name: longName, arguments: {} });
    const lines = logLines.slice(before);
    expect(lines.some((line) => line.includes('"rpc":"tools/call"'))).toBe(true);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(4_096);
  });
});
