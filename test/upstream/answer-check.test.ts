/**
 * The structural check of an upstream's answer (src/upstream/answer-check.ts) gives the SDK's
 * verdict and value: a plain result response is taken as it is, anything else is parsed by the
 * SDK's own `JSONRPCMessageSchema` (so an invalid message still throws, and extra keys are
 * stripped as before).
 */
import { parseJSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { checkAnswerMessage, isPlainResultResponse } from '../../src/upstream/answer-check.js';

const sdkVerdict = (value: unknown): unknown => {
  try {
    return parseJSONRPCMessage(value);
  } catch {
    return 'invalid';
  }
};
const ours = (value: unknown): unknown => {
  try {
    return checkAnswerMessage(value);
  } catch {
    return 'invalid';
  }
};

describe('checkAnswerMessage', () => {
  it.each([
    ['a result response', { jsonrpc: '2.0', id: 7, result: { content: [] } }, true],
    ['a result response with a string id', { jsonrpc: '2.0', id: 'a', result: {} }, true],
    ['a result carrying _meta', { jsonrpc: '2.0', id: 1, result: { _meta: { progressToken: 1 } } }, false],
    ['an extra top-level key (stripped by the schema)', { jsonrpc: '2.0', id: 1, result: {}, extra: true }, false],
    ['an error response', { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'x' } }, false],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }, false],
    ['a wrong version', { jsonrpc: '1.0', id: 1, result: {} }, false],
    ['a fractional id', { jsonrpc: '2.0', id: 1.5, result: {} }, false],
    ['a result that is an array', { jsonrpc: '2.0', id: 1, result: [] }, false],
    ['null', null, false],
  ])('%s: same verdict and value as the SDK', (_what, value, plain) => {
    expect(isPlainResultResponse(value)).toBe(plain);
    expect(ours(value)).toEqual(sdkVerdict(value));
  });
});
