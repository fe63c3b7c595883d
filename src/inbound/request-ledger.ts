/**
 * The requests one 2025-era session has accepted and not yet answered, keyed by JSON-RPC id: the
 * one place a session's in-flight ids are admitted, looked up and released. The session's wire
 * (`SessionHttpTransport`, `SseSessionTransport`) owns it, since the wire is what sees a request
 * arrive, its response leave and its cancellation come in.
 *
 * A request whose id is already in flight is refused: with two requests under one id, responses
 * and cancellations cannot be told apart (other MCP proxies hang or misroute there). Bounded: a
 * client cannot hold more than `max` requests open.
 */
import { refusal } from '../errors.js';
import { requestKey, type RequestId } from '../session/jsonrpc-id.js';

/** In-flight requests one session may have; beyond it the client is told to slow down. */
export const MAX_IN_FLIGHT = 1024;

export class RequestLedger<T> {
  private readonly open = new Map<string, T>();
  private readonly max: number;

  constructor(max: number = MAX_IN_FLIGHT) {
    this.max = max;
  }

  get size(): number {
    return this.open.size;
  }

  /**
   * Takes `id` for `entry`, or answers why not: a duplicate with id null (under the id it would
   * read as the answer to the call in flight), a full ledger with the request's id.
   */
  admit(id: RequestId, entry: T): Response | undefined {
    const key = requestKey(id);
    if (this.open.has(key)) return refusal('DUPLICATE_REQUEST_ID', 'a request with this id is already in flight in this session');
    if (this.open.size >= this.max) return refusal('IN_FLIGHT_LIMIT', 'too many requests in flight in this session', { id });
    this.open.set(key, entry);
    return undefined;
  }

  get(id: RequestId): T | undefined {
    return this.open.get(requestKey(id));
  }

  /** Frees `id`; when `entry` is given, only if the id is still held by that very entry. True when freed. */
  release(id: RequestId, entry?: T): boolean {
    const key = requestKey(id);
    if (!this.open.has(key) || (entry !== undefined && this.open.get(key) !== entry)) return false;
    return this.open.delete(key);
  }

  values(): IterableIterator<T> {
    return this.open.values();
  }
}

/** The id a `notifications/cancelled` names, if `message` is one (MCP: the server stays silent on it). */
export function cancelledRequestId(message: unknown): RequestId | undefined {
  const note = message as { method?: unknown; params?: { requestId?: unknown } } | undefined;
  if (note?.method !== 'notifications/cancelled') return undefined;
  const id = note.params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}
