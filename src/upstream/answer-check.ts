/**
 * Whether a message an upstream answered with is a JSON-RPC result response, judged
 * structurally: the verdict (and the value) the SDK's `JSONRPCMessageSchema` gives for it, without
 * a zod parse per call. Anything else — an error response, a request or notification on the
 * answer, a result carrying `_meta`, extra top-level keys (which the schema strips) — goes
 * through the SDK's own parser.
 */
import { parseJSONRPCMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for `{ jsonrpc: "2.0", id, result: {…} }` with no other keys and no `result._meta`. */
export function isPlainResultResponse(value: unknown): value is JSONRPCMessage {
  if (!isPlainObject(value) || value.jsonrpc !== '2.0') return false;
  const id = value.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  const result = value.result;
  if (!isPlainObject(result) || '_meta' in result) return false;
  for (const key in value) if (key !== 'jsonrpc' && key !== 'id' && key !== 'result') return false;
  return true;
}

/** The message as the SDK's transport would hand it on; throws as its parse does. */
export function checkAnswerMessage(value: unknown): JSONRPCMessage {
  return isPlainResultResponse(value) ? value : parseJSONRPCMessage(value);
}
