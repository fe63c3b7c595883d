import type { ServerContext } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { callSink } from '../../src/inbound/gateway-server.js';

/** The part of the SDK's request context a call sink uses: its signal, notify and send. */
function context(signal: AbortSignal, seen: unknown[]): ServerContext {
  return {
    mcpReq: {
      signal,
      notify: async (message: unknown) => void seen.push(message),
      send: async (message: unknown) => {
        seen.push(message);
        return {};
      },
    },
  } as unknown as ServerContext;
}

describe('callSink', () => {
  const note = { method: 'notifications/progress', params: { progressToken: 1, progress: 1 } };
  const ask = { method: 'elicitation/create', params: { message: 'ok?' } };

  it('relays a live call’s notifications and requests to its own stream', async () => {
    const seen: unknown[] = [];
    const sink = callSink(context(new AbortController().signal, seen), '2025');
    await sink.notify(note);
    await sink.request(ask, undefined);
    expect(seen).toEqual([note, ask]);
  });

  it('drops a cancelled call’s late messages: its id may already belong to a new request', async () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    const sink = callSink(context(controller.signal, seen), '2025');
    controller.abort();
    await sink.notify(note);
    await expect(sink.request(ask, undefined)).rejects.toThrow(/cancelled/);
    expect(seen).toEqual([]);
  });
});
