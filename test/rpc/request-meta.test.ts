/**
 * What an upstream request's `_meta` holds, written in one step from the client's (request-meta.ts):
 * the link's own progress token in place of the client's, the gateway's options never, the 2026
 * envelope only to a 2026 upstream, with the requesting client's capabilities; a traced call's own
 * trace context in place of the client's.
 */
import { describe, expect, it } from 'vitest';
import { progressTokenOf, requestMeta, upstreamMeta } from '../../src/rpc/request-meta.js';

const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const client = requestMeta({
  progressToken: 'client-token',
  'portcullis/options': { deferTools: true },
  traceparent: '00-abc-def-01',
  [CAPS]: { sampling: {} },
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
});

describe('request meta', () => {
  it('is frozen, and absent when the client sent none', () => {
    expect(Object.isFrozen(client)).toBe(true);
    expect(requestMeta({})).toBeUndefined();
  });

  it('reads the client’s progress token only when it is a string or a number', () => {
    expect(progressTokenOf(client)).toBe('client-token');
    expect(progressTokenOf(requestMeta({ progressToken: 3 }))).toBe(3);
    expect(progressTokenOf(requestMeta({ progressToken: {} }))).toBeUndefined();
    expect(progressTokenOf(undefined)).toBeUndefined();
  });

  it('gives a 2025 upstream the client’s own fields and the link’s token: no envelope, no gateway options', () => {
    expect(upstreamMeta(client, { era: '2025', clientCapabilities: { roots: {} }, progressToken: 41 })).toEqual({
      traceparent: '00-abc-def-01',
      progressToken: 41,
    });
  });

  it('gives a 2026 upstream the envelope with the requesting client’s capabilities', () => {
    expect(upstreamMeta(client, { era: '2026', clientCapabilities: { elicitation: {} }, progressToken: undefined })).toEqual({
      traceparent: '00-abc-def-01',
      [CAPS]: { elicitation: {} },
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    });
  });

  it('puts the gateway’s trace context of a traced call in place of the client’s, keeping the rest', () => {
    const traced = requestMeta({ traceparent: '00-client-01', tracestate: 'vendor=client', custom: 1 });
    const gateway = { traceparent: '00-gateway-01' };
    expect(upstreamMeta(traced, { era: '2025', clientCapabilities: undefined, progressToken: 7, traceContext: gateway })).toEqual({
      traceparent: '00-gateway-01',
      custom: 1,
      progressToken: 7,
    });
    expect(upstreamMeta(undefined, { era: '2025', clientCapabilities: undefined, progressToken: undefined, traceContext: gateway })).toEqual(gateway);
  });

  it('leaves `_meta` out when nothing is left to send', () => {
    expect(upstreamMeta(requestMeta({ progressToken: 1, 'portcullis/options': {} }), { era: '2025', clientCapabilities: undefined, progressToken: undefined })).toBeUndefined();
    expect(upstreamMeta(undefined, { era: '2025', clientCapabilities: {}, progressToken: undefined })).toBeUndefined();
  });

  it('relays a client key named __proto__ as a key, never as the prototype of the upstream _meta', () => {
    const hostile = requestMeta(JSON.parse('{"__proto__": {"injected": true}, "custom": 1}'));
    const out = upstreamMeta(hostile, { era: '2025', clientCapabilities: undefined, progressToken: undefined })!;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { injected?: unknown }).injected).toBeUndefined();
    expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse('{"__proto__": {"injected": true}, "custom": 1}'));
  });
});
