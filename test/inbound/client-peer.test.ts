/**
 * The gateway's JSON-RPC peer toward one 2025-era client, on a wire that records what the peer
 * sends (the wire is the peer's boundary: a pipe of messages), answering through a real method
 * table and a real scope in front of a stdio fixture child. Correlation both ways, cancellation,
 * what `initialize` records, server→client requests tied to the call that caused them, and the
 * bounds.
 */
import { ProtocolError, type ServerCapabilities, type JSONRPCMessage, type MessageExtraInfo, type Transport, type TransportSendOptions } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announced, ClientPeer, MAX_CLIENT_REQUESTS } from '../../src/inbound/client-peer.js';
import { createMethodTable } from '../../src/inbound/method-table.js';
import { StatelessScope } from '../../src/routing/scopes/stateless-scope.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { waitUntil } from '../integration/harness/wait.js';
import { deps, logger, serverConfigs } from '../upstream/fixture-link.js';

let registry: UpstreamRegistry;
let stateless: StatelessScope;

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
  stateless = new StatelessScope({ registry, servers: ServerRoster.of(['fx']), catalogue: { separator: '__', toolFilter: () => true }, logger });
});
afterAll(async () => {
  await stateless?.close();
  await registry.close();
});

/** A session wire that keeps what the peer sends and hands it the client's messages. */
class RecordingWire implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly sessionId = 'recorded';
  readonly sent: Array<{ message: Record<string, unknown>; related: unknown }> = [];
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push({ message: message as Record<string, unknown>, related: options?.relatedRequestId });
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
  client(message: Record<string, unknown>): void {
    this.onmessage?.({ jsonrpc: '2.0', ...message } as JSONRPCMessage, {});
  }
  /** The first message sent that `match` accepts, once there is one. */
  async next(match: (message: Record<string, unknown>) => boolean): Promise<{ message: Record<string, unknown>; related: unknown }> {
    await waitUntil(() => this.sent.some((entry) => match(entry.message)));
    return this.sent.find((entry) => match(entry.message))!;
  }
}

const INIT = { protocolVersion: '2025-11-25', capabilities: { elicitation: {}, roots: {} }, clientInfo: { name: 'c', version: '1' } };

/** A started peer; initialised (elicitation and roots declared) unless `initialised` is false. */
async function peerOn({ capabilities = { tools: {}, logging: {} } as ServerCapabilities, initialised = true } = {}) {
  const wire = new RecordingWire();
  const table = createMethodTable({ era: '2025', name: 'gw', version: '1', capabilities, instructions: undefined, logger });
  const peer = new ClientPeer({ wire, table, capabilities, scopeOf: () => stateless.forPrincipal(undefined) });
  await peer.start();
  if (initialised) {
    wire.client({ id: 'init', method: 'initialize', params: INIT });
    await wire.next(answerTo('init'));
  }
  return { peer, wire };
}
function answerTo(id: unknown) {
  return (message: Record<string, unknown>) => message.id === id && ('result' in message || 'error' in message);
}

describe('ClientPeer', () => {
  it('answers initialize and records what the client declared; a refused initialize records nothing', async () => {
    const { peer, wire } = await peerOn({ initialised: false });
    wire.client({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { roots: {} } } });
    expect((await wire.next(answerTo(1))).message.error).toMatchObject({ code: -32602 });
    expect(peer.clientCapabilities).toBeUndefined();
    wire.client({ id: 2, method: 'initialize', params: INIT });
    const answered = await wire.next(answerTo(2));
    expect(answered.message.result).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'gw', version: '1' } });
    expect(peer.clientCapabilities).toEqual({ elicitation: {}, roots: {} });
    expect(peer.sessionSink.clientCapabilities).toEqual({ elicitation: {}, roots: {} });
  });

  it('relays a call’s progress on the call’s own stream, before its result', async () => {
    const { wire } = await peerOn();
    wire.client({ id: 'p', method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 40, steps: 4 }, _meta: { progressToken: 'tok' } } });
    await wire.next(answerTo('p'));
    const progress = wire.sent.filter((entry) => entry.message.method === 'notifications/progress');
    expect(progress.length).toBe(4);
    for (const entry of progress) {
      expect(entry.related).toBe('p');
      expect((entry.message.params as { progressToken: unknown }).progressToken).toBe('tok');
    }
    expect(wire.sent.findIndex(({ message }) => answerTo('p')(message))).toBeGreaterThan(wire.sent.indexOf(progress[3]!));
  });

  it('a cancelled call gets no response, and its id serves the next request', async () => {
    const { wire } = await peerOn();
    wire.client({ id: 9, method: 'tools/call', params: { name: 'fx__slow', arguments: { ms: 5_000, steps: 50 }, _meta: { progressToken: 1 } } });
    await wire.next((message) => message.method === 'notifications/progress');
    wire.client({ method: 'notifications/cancelled', params: { requestId: 9, reason: 'user' } });
    wire.client({ id: 9, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'again' } } });
    const answered = await wire.next(answerTo(9));
    expect(answered.message.result).toMatchObject({ content: [{ type: 'text', text: 'again' }] });
    expect(wire.sent.filter(({ message }) => answerTo(9)(message))).toHaveLength(1);
  });

  it('asks the client on the call’s own stream and hands its answer back to the upstream', async () => {
    const { wire } = await peerOn();
    wire.client({ id: 'e', method: 'tools/call', params: { name: 'fx__test_streaming_elicitation', arguments: {} } });
    const asked = await wire.next((message) => message.method === 'elicitation/create');
    expect(asked.related).toBe('e');
    expect(typeof asked.message.id).toBe('number');
    wire.client({ id: asked.message.id, result: { action: 'accept', content: { ok: true } } });
    const answered = await wire.next(answerTo('e'));
    expect(answered.message.result).toMatchObject({ content: [{ type: 'text', text: 'Elicitation completed: action=accept, content={"ok":true}' }] });
  });

  it('a client’s error answer rejects with its code; an answer to an id never sent is dropped', async () => {
    const { peer, wire } = await peerOn();
    const asking = peer.sessionSink.request({ method: 'roots/list' });
    const asked = await wire.next((message) => message.method === 'roots/list');
    expect(asked.related).toBeUndefined();
    wire.client({ id: 4242, result: { roots: [] } });
    wire.client({ id: 'not-ours', result: {} });
    wire.client({ id: asked.message.id, error: { code: -32601, message: 'no roots here' } });
    const error = await asking.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32601);
  });

  it('a caller giving up cancels its request toward the client', async () => {
    const { peer, wire } = await peerOn();
    const controller = new AbortController();
    const asking = peer.sessionSink.request({ method: 'roots/list' }, controller.signal);
    const asked = await wire.next((message) => message.method === 'roots/list');
    controller.abort(new Error('no longer needed'));
    await expect(asking).rejects.toThrow(/no longer needed/);
    const cancel = await wire.next((message) => message.method === 'notifications/cancelled');
    expect((cancel.message.params as { requestId: unknown }).requestId).toBe(asked.message.id);
    // A late answer finds nothing waiting.
    wire.client({ id: asked.message.id, result: { roots: [] } });
  });

  it('drops what a cancelled call sends late: its id may already be a new request’s', async () => {
    const { wire } = await peerOn();
    wire.client({ id: 5, method: 'tools/call', params: { name: 'fx__emit_notifications', arguments: { count: 10_000 } } });
    await wire.next((message) => message.method === 'notifications/message');
    wire.client({ method: 'notifications/cancelled', params: { requestId: 5 } });
    const cut = wire.sent.length;
    wire.client({ id: 5, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'new call' } } });
    await wire.next(answerTo(5));
    const after = wire.sent.slice(cut).filter((entry) => entry.related === 5);
    expect(after.map(({ message }) => message.method ?? 'answer')).toEqual(['answer']);
    expect(after[0]!.message.result).toMatchObject({ content: [{ type: 'text', text: 'new call' }] });
  });

  it('asks the client only what it declared, and tells it only what the gateway announced', async () => {
    const { peer, wire } = await peerOn({ capabilities: { tools: {} }, initialised: false });
    wire.client({ id: 1, method: 'initialize', params: { ...INIT, capabilities: {} } });
    await wire.next(answerTo(1));
    await expect(peer.sessionSink.request({ method: 'roots/list' })).rejects.toMatchObject({ code: 'CLIENT_CAPABILITY_MISSING' });
    await peer.sessionSink.notify({ method: 'notifications/message', params: { level: 'info', data: 'unannounced' } });
    await peer.sessionSink.notify({ method: 'notifications/tools/list_changed' });
    expect(wire.sent.filter(({ message }) => typeof message.method === 'string').map(({ message }) => message.method)).toEqual(['notifications/tools/list_changed']);
  });

  it('announced: a capability-bound notification only under its capability', () => {
    const table = [
      ['notifications/message', { logging: {} }, undefined, true],
      ['notifications/message', {}, undefined, false],
      ['notifications/resources/updated', { resources: {} }, undefined, true],
      ['notifications/resources/list_changed', {}, undefined, false],
      ['notifications/tools/list_changed', {}, undefined, false],
      ['notifications/prompts/list_changed', { prompts: {} }, undefined, true],
      ['notifications/elicitation/complete', {}, { elicitation: { url: {} } }, true],
      ['notifications/elicitation/complete', {}, { elicitation: {} }, false],
      ['notifications/progress', {}, undefined, true],
    ] as const;
    for (const [method, server, client, expected] of table) expect(announced(method, server, client), method).toBe(expected);
  });

  it('bounds the requests waiting on the client, and closing fails every one of them', async () => {
    const { peer, wire } = await peerOn();
    const waiting = Array.from({ length: MAX_CLIENT_REQUESTS }, () => peer.sessionSink.request({ method: 'roots/list' }).catch((error: unknown) => error));
    await expect(peer.sessionSink.request({ method: 'roots/list' })).rejects.toThrow(/too many/);
    await peer.close();
    const failures = await Promise.all(waiting);
    expect(failures.every((error) => error instanceof Error && /closed/.test(error.message))).toBe(true);
    await expect(peer.sessionSink.notify({ method: 'notifications/tools/list_changed' })).rejects.toThrow(/closed/);
    expect(wire.sent.filter(({ message }) => message.method === 'roots/list')).toHaveLength(MAX_CLIENT_REQUESTS);
  });
});
