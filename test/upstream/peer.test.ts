/**
 * The gateway's own JSON-RPC peer against a scripted upstream on the other end of its wire: what
 * it keeps open (what attribution is proved against: a call is the provable cause of what an
 * upstream sends only while its request is the only one open, and a request given up on stays
 * open until the upstream answers it or the connection closes), how it cancels per era, and how
 * it answers the upstream's own requests.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { UpstreamError, UpstreamRpcError } from '../../src/errors.js';
import { silentLogger } from '../../src/observability/logger.js';
import { classifyInbound, RpcPeer, type PeerOptions, type Wire, type WireSendOptions } from '../../src/upstream/peer.js';

type Sent = { message: Record<string, unknown>; options: WireSendOptions | undefined };

/** A wire whose far end is the test: it records what the peer sends and injects what arrives. */
class ScriptedWire implements Wire {
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  readonly sent: Sent[] = [];
  constructor(readonly hasPerRequestStream = false) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage, options?: WireSendOptions): Promise<void> {
    this.sent.push({ message: message as unknown as Record<string, unknown>, options });
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
  arrive(message: Record<string, unknown>): void {
    this.onmessage?.(message as unknown as JSONRPCMessage);
  }
  /** The id of the last request sent with `method`. */
  idOf(method: string): string | number {
    const found = [...this.sent].reverse().find((s) => s.message.method === method);
    if (found === undefined) throw new Error(`no ${method} sent`);
    return found.message.id as string | number;
  }
}

function peerOn(wire: ScriptedWire, onRequest: PeerOptions['onRequest'] = () => Promise.resolve({})) {
  const notifications: string[] = [];
  let closed = 0;
  const peer = new RpcPeer<string>({
    server: 'up',
    wire,
    logger: silentLogger(),
    onRequest,
    onNotification: (method) => void notifications.push(method),
    onClose: () => void closed++,
  });
  return { peer, notifications, closes: () => closed };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('RpcPeer', () => {
  it('names the call whose request is the only one open, and nobody once it is answered', async () => {
    const wire = new ScriptedWire();
    const { peer } = peerOn(wire);
    const answer = peer.request('tools/call', { name: 'a' }, { call: 'A', timeoutMs: 60_000 });
    expect(peer.soleLiveCall()).toBe('A');
    wire.arrive({ jsonrpc: '2.0', id: wire.idOf('tools/call'), result: { content: [] } });
    await expect(answer).resolves.toEqual({ content: [] });
    expect(peer.soleLiveCall()).toBeUndefined();
    expect(peer.idle).toBe(true);
  });

  it('names nobody while two requests are open, the link’s own one included', () => {
    const wire = new ScriptedWire();
    const { peer } = peerOn(wire);
    void peer.request('tools/call', {}, { call: 'A', timeoutMs: 60_000 }).catch(() => undefined);
    void peer.request('tools/list', {}, { timeoutMs: 60_000 }).catch(() => undefined);
    expect(peer.soleLiveCall()).toBeUndefined();
  });

  it('keeps a timed-out request open, naming nobody, tells the upstream it was cancelled, and is idle once it is answered after all', async () => {
    const wire = new ScriptedWire();
    const { peer } = peerOn(wire);
    const answer = peer.request('tools/call', {}, { call: 'A', timeoutMs: 5 });
    await expect(answer).rejects.toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    const id = wire.idOf('tools/call');
    expect(wire.sent.at(-1)?.message).toMatchObject({ method: 'notifications/cancelled', params: { requestId: id } });
    expect(peer.idle).toBe(false);
    expect(peer.soleLiveCall()).toBeUndefined();
    const idle = peer.whenIdle(60_000);
    wire.arrive({ jsonrpc: '2.0', id: String(id), result: {} }); // "1" answers 1
    await expect(idle).resolves.toBe(true);
  });

  it('cancels a 2026-era request over a wire with per-request streams by closing its stream, not by notification', async () => {
    const wire = new ScriptedWire(true);
    const { peer } = peerOn(wire);
    peer.useEnvelope({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' });
    const abort = new AbortController();
    const answer = peer.request('tools/call', {}, { call: 'A', signal: abort.signal, timeoutMs: 60_000 });
    const { options } = wire.sent.at(-1)!;
    abort.abort();
    await expect(answer).rejects.toBeInstanceOf(UpstreamError);
    expect(options?.requestSignal?.aborted).toBe(true);
    expect(wire.sent.some((s) => s.message.method === 'notifications/cancelled')).toBe(false);
  });

  it('writes the 2026 envelope under the caller’s own _meta, which wins', () => {
    const wire = new ScriptedWire();
    const { peer } = peerOn(wire);
    peer.useEnvelope({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} });
    void peer.request('tools/call', { _meta: { 'io.modelcontextprotocol/clientCapabilities': { roots: {} } } }, { timeoutMs: 60_000 }).catch(() => undefined);
    expect(wire.sent.at(-1)?.message.params).toEqual({
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { roots: {} } },
    });
  });

  it('is not fit to serve again when the grace passes or the connection closes first; a close fails what is open', async () => {
    const wire = new ScriptedWire();
    const { peer, closes } = peerOn(wire);
    void peer.request('tools/call', {}, { call: 'A', timeoutMs: 1 }).catch(() => undefined);
    await settle();
    await expect(peer.whenIdle(10)).resolves.toBe(false);
    const waiting = peer.whenIdle(60_000);
    const open = peer.request('tools/call', {}, { call: 'B', timeoutMs: 60_000 });
    await wire.close();
    await expect(waiting).resolves.toBe(false);
    await expect(open).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(closes()).toBe(1);
    await expect(peer.request('ping', {}, { timeoutMs: 10 })).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });

  it('relays the upstream’s JSON-RPC error as it answered', async () => {
    const wire = new ScriptedWire();
    const { peer } = peerOn(wire);
    const answer = peer.request('tools/call', {}, { timeoutMs: 60_000 });
    wire.arrive({ jsonrpc: '2.0', id: wire.idOf('tools/call'), error: { code: -32602, message: 'bad', data: { x: 1 } } });
    const error = await answer.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamRpcError);
    expect(error).toMatchObject({ rpcCode: -32602, message: 'bad', data: { x: 1 } });
  });

  it('does not count a long-lived stream as open, and ends it on the upstream’s cancellation', async () => {
    const wire = new ScriptedWire();
    const { peer } = peerOn(wire);
    const ends: string[] = [];
    let acked = false;
    const stream = peer.stream('subscriptions/listen', { notifications: {} }, { onAck: () => (acked = true), onEnd: (how) => void ends.push(how) });
    expect(peer.idle).toBe(true);
    void peer.request('tools/call', {}, { call: 'A', timeoutMs: 60_000 }).catch(() => undefined);
    expect(peer.soleLiveCall()).toBe('A');
    wire.arrive({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': stream.id } } });
    expect(acked).toBe(true);
    wire.arrive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: stream.id } });
    expect(ends).toEqual(['remote']);
  });

  it('answers ping itself, hands other requests of the upstream to the link, and aborts one the upstream cancels', async () => {
    const wire = new ScriptedWire();
    let seen: AbortSignal | undefined;
    const { peer } = peerOn(wire, (_request, signal) => {
      seen = signal;
      return new Promise(() => undefined);
    });
    void peer;
    wire.arrive({ jsonrpc: '2.0', id: 'p', method: 'ping' });
    await settle();
    expect(wire.sent.at(-1)?.message).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
    wire.arrive({ jsonrpc: '2.0', id: 7, method: 'sampling/createMessage', params: {} });
    expect(seen?.aborted).toBe(false);
    wire.arrive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    expect(seen?.aborted).toBe(true);
  });

  it('refuses the upstream’s requests past its bound instead of holding them all', async () => {
    const wire = new ScriptedWire();
    peerOn(wire, () => new Promise(() => undefined));
    for (let id = 0; id < 65; id++) wire.arrive({ jsonrpc: '2.0', id, method: 'roots/list' });
    await settle();
    const refusals = wire.sent.filter((s) => 'error' in s.message);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.message).toMatchObject({ id: 64, error: { data: { code: 'UPSTREAM_BUSY' } } });
  });

  it('reads the JSON-RPC envelope only, and refuses what is not JSON-RPC', () => {
    expect(classifyInbound({ jsonrpc: '2.0', id: 1, result: { anything: [1, { deep: true }] } })).toMatchObject({ kind: 'result', id: 1 });
    expect(classifyInbound({ jsonrpc: '2.0', method: 'notifications/progress' })).toMatchObject({ kind: 'notification' });
    expect(classifyInbound({ jsonrpc: '2.0', id: null, method: 'x' })).toBeUndefined();
    expect(classifyInbound({ jsonrpc: '1.0', id: 1, result: {} })).toBeUndefined();
    expect(classifyInbound({ jsonrpc: '2.0', id: 1, result: 'text' })).toBeUndefined();
    expect(classifyInbound({ jsonrpc: '2.0', id: 1, method: 'x', params: [1] })).toBeUndefined();
    expect(classifyInbound([{ jsonrpc: '2.0', id: 1, result: {} }])).toBeUndefined();
  });
});
