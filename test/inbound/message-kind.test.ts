import { isJSONRPCNotification, isJSONRPCRequest, parseJSONRPCMessage } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageKind } from '../../src/inbound/message-kind.js';

/** The SDK's verdict, the oracle the structural check must agree with. */
function sdkKind(value: unknown): string {
  try {
    parseJSONRPCMessage(value);
  } catch {
    return 'invalid';
  }
  if (isJSONRPCRequest(value)) return 'request';
  if (isJSONRPCNotification(value)) return 'notification';
  return 'response';
}

const RELATED = 'io.modelcontextprotocol/related-task';

const idLike = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.double(), fc.constant(null), fc.boolean(), fc.constant(2 ** 60));
const meta = fc.oneof(
  fc.constant(undefined),
  fc.record({ progressToken: idLike }, { requiredKeys: [] }),
  fc.record({ [RELATED]: fc.oneof(fc.record({ taskId: fc.oneof(fc.string(), fc.integer()) }), fc.string()) }),
  fc.jsonValue(),
);
const params = fc.oneof(
  fc.constant(undefined),
  fc.record({ _meta: meta, name: fc.string() }, { requiredKeys: [] }),
  fc.array(fc.integer()),
  fc.string(),
  fc.constant(null),
);
/** Objects shaped like JSON-RPC messages, each field right, wrong or missing. */
const messageLike = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.constant(2)),
    id: idLike,
    method: fc.oneof(fc.string({ maxLength: 12 }), fc.integer()),
    params,
    result: fc.oneof(fc.record({ content: fc.array(fc.string()) }), fc.string(), fc.constant(null)),
    error: fc.oneof(fc.record({ code: fc.oneof(fc.integer(), fc.double()), message: fc.oneof(fc.string(), fc.integer()) }), fc.string()),
    extra: fc.string(),
  },
  { requiredKeys: [] },
).map((record) => {
  // Drop undefined-valued keys: JSON has no undefined.
  return JSON.parse(JSON.stringify(record)) as unknown;
});

describe('messageKind', () => {
  it('agrees with the SDK schema on JSON-RPC-shaped objects', () => {
    fc.assert(
      fc.property(messageLike, (value) => {
        expect(messageKind(value)).toBe(sdkKind(value));
      }),
      { numRuns: 20_000 },
    );
  });

  it('agrees with the SDK schema on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(messageKind(value)).toBe(sdkKind(value));
      }),
      { numRuns: 5_000 },
    );
  });

  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } }, 'request'],
    [{ jsonrpc: '2.0', method: 'notifications/initialized' }, 'notification'],
    [{ jsonrpc: '2.0', id: 'a', result: {} }, 'response'],
    [{ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } }, 'response'],
    [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 'ping', extra: true }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 'ping', params: [] }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { progressToken: 1.5 } } }, 'invalid'],
    [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], 'invalid'],
  ])('judges %j as %s', (value, kind) => {
    expect(messageKind(value)).toBe(kind);
    expect(sdkKind(value)).toBe(kind);
  });
});
