/**
 * What kind of JSON-RPC message a client POSTed, judged structurally: the same verdict as the
 * SDK's `JSONRPCMessageSchema` (checked against it by property test), without a zod parse per
 * call. Requests and notifications, nearly all of the traffic, are judged here outright;
 * responses (a client answering a server request: rare) go through the SDK's own parser.
 */
import { parseJSONRPCMessage } from '@modelcontextprotocol/server';

export type MessageKind = 'request' | 'notification' | 'response' | 'invalid';

const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isRequestId(value: unknown): boolean {
  return typeof value === 'string' || Number.isSafeInteger(value);
}

/** `params` as the schema allows it: absent, or an object whose `_meta` (if any) is well-formed. */
function validParams(params: unknown): boolean {
  if (params === undefined) return true;
  if (!isPlainObject(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isPlainObject(meta)) return false;
  if (meta.progressToken !== undefined && !isRequestId(meta.progressToken)) return false;
  const related = meta[RELATED_TASK_KEY];
  return related === undefined || (isPlainObject(related) && typeof related.taskId === 'string');
}

export function messageKind(value: unknown): MessageKind {
  if (!isPlainObject(value) || value.jsonrpc !== '2.0') return 'invalid';
  if ('method' in value) {
    if (typeof value.method !== 'string' || !validParams(value.params)) return 'invalid';
    for (const key in value) if (key !== 'jsonrpc' && key !== 'method' && key !== 'params' && key !== 'id') return 'invalid';
    if (!('id' in value)) return 'notification';
    return isRequestId(value.id) ? 'request' : 'invalid';
  }
  try {
    parseJSONRPCMessage(value);
    return 'response';
  } catch {
    return 'invalid';
  }
}
