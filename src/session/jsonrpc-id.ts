/**
 * JSON-RPC request ids as the gateway tracks them (in-flight sets, failover records): a request's
 * id, a response's id, and the key an id is stored under — its JSON, so `1` and `"1"` stay apart.
 */
export type RequestId = string | number;

function asId(value: unknown): RequestId | undefined {
  return typeof value === 'string' || typeof value === 'number' ? value : undefined;
}

/** The key a request id is tracked under. */
export function requestKey(id: RequestId): string {
  return JSON.stringify(id);
}

/** The key of `value` if it is a valid request id. */
export function keyOf(value: unknown): string | undefined {
  const id = asId(value);
  return id === undefined ? undefined : requestKey(id);
}

/** The id of a JSON-RPC request (not a notification or response), if `message` is one. */
export function requestIdOf(message: unknown): RequestId | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as { id?: unknown; method?: unknown };
  return typeof m.method === 'string' ? asId(m.id) : undefined;
}

/** The id of a JSON-RPC response (result or error), if `message` is one. */
export function responseIdOf(message: unknown): RequestId | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as { id?: unknown; result?: unknown; error?: unknown; method?: unknown };
  if (m.method !== undefined || (m.result === undefined && m.error === undefined)) return undefined;
  return asId(m.id);
}
