import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { InputBridge } from '../../src/routing/input-bridge.js';
import type { DownstreamSink, RpcMessage } from '../../src/rpc/sink.js';

function recordingSink(): DownstreamSink & { notes: RpcMessage[] } {
  const notes: RpcMessage[] = [];
  return {
    notes,
    canRequest: false,
    request: () => Promise.reject(new Error('a 2026 client cannot be asked directly')),
    notify: async (message) => {
      notes.push(message);
    },
  };
}

const never = () => new AbortController().signal;

describe('InputBridge', () => {
  it('passes a call that needs no input straight through', async () => {
    const bridge = new InputBridge({ max: 10, ttlMs: 60_000 });
    const result = await bridge.start(recordingSink(), never(), async () => ({ content: [] }));
    expect(result).toEqual({ content: [] });
  });

  it('suspends a call whose upstream asks for input, and resumes it with the answers', async () => {
    const bridge = new InputBridge({ max: 10, ttlMs: 60_000 });
    const first = await bridge.start(recordingSink(), never(), async (sink) => {
      const answer = await sink.request({ method: 'elicitation/create', params: { message: 'name?' } });
      return { content: [{ type: 'text', text: `hello ${String(answer.name)}` }] };
    });
    expect(first.resultType).toBe('input_required');
    const requests = first.inputRequests as Record<string, RpcMessage>;
    const [key] = Object.keys(requests);
    expect(requests[key!]).toEqual({ method: 'elicitation/create', params: { message: 'name?' } });
    expect(bridge.owns(first.requestState)).toBe(true);

    const second = await bridge.resume(first.requestState as string, { [key!]: { name: 'ada' } }, recordingSink(), never());
    expect(second).toEqual({ content: [{ type: 'text', text: 'hello ada' }] });
    expect(bridge.owns(first.requestState)).toBe(false);
  });

  it('gathers every request the upstream makes at once into one round', async () => {
    const bridge = new InputBridge({ max: 10, ttlMs: 60_000 });
    const first = await bridge.start(recordingSink(), never(), async (sink) => {
      const [a, b] = await Promise.all([
        sink.request({ method: 'roots/list' }),
        sink.request({ method: 'sampling/createMessage', params: { maxTokens: 1, messages: [] } }),
      ]);
      return { a, b };
    });
    const keys = Object.keys(first.inputRequests as object);
    expect(keys).toHaveLength(2);
    const done = await bridge.resume(first.requestState as string, { [keys[0]!]: { roots: [] }, [keys[1]!]: { model: 'm' } }, recordingSink(), never());
    expect(done).toEqual({ a: { roots: [] }, b: { model: 'm' } });
  });

  it('asks again for an answer the retry left out', async () => {
    const bridge = new InputBridge({ max: 10, ttlMs: 60_000 });
    const first = await bridge.start(recordingSink(), never(), async (sink) => ({ got: await sink.request({ method: 'roots/list' }) }));
    const again = await bridge.resume(first.requestState as string, {}, recordingSink(), never());
    expect(again.resultType).toBe('input_required');
    expect(Object.keys(again.inputRequests as object)).toEqual(Object.keys(first.inputRequests as object));
    expect(again.requestState).not.toBe(first.requestState);
  });

  it('refuses a requestState it did not issue', () => {
    const bridge = new InputBridge({ max: 10, ttlMs: 60_000 });
    expect(bridge.owns('forged')).toBe(false);
    expect(() => bridge.resume('forged', {}, recordingSink(), never())).toThrow(GatewayError);
  });

  it('abandons a suspended call nobody resumes, cancelling the upstream request', async () => {
    const bridge = new InputBridge({ max: 10, ttlMs: 50 });
    let upstreamSignal: AbortSignal | undefined;
    const first = await bridge.start(recordingSink(), never(), async (sink, signal) => {
      upstreamSignal = signal;
      return sink.request({ method: 'roots/list' }, signal);
    });
    expect(first.resultType).toBe('input_required');
    await new Promise<void>((resolve) => upstreamSignal!.addEventListener('abort', () => resolve()));
    expect(upstreamSignal!.aborted).toBe(true);
    expect(bridge.owns(first.requestState)).toBe(false);
  });

  it('delivers notifications of a resumed call to the stream of the round being served', async () => {
    const bridge = new InputBridge({ max: 10, ttlMs: 60_000 });
    const firstSink = recordingSink();
    const secondSink = recordingSink();
    const first = await bridge.start(firstSink, never(), async (sink) => {
      await sink.request({ method: 'roots/list' });
      await sink.notify({ method: 'notifications/progress', params: { progress: 1 } });
      return {};
    });
    const [key] = Object.keys(first.inputRequests as object);
    await bridge.resume(first.requestState as string, { [key!]: { roots: [] } }, secondSink, never());
    expect(firstSink.notes).toEqual([]);
    expect(secondSink.notes).toEqual([{ method: 'notifications/progress', params: { progress: 1 } }]);
  });
});
