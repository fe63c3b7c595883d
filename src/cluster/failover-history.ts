/**
 * What a replica taking a session over reads from the dead owner's event history (the session's
 * Redis Stream, see `redis-event-store.ts`): every event's sequence and stream in order (so the
 * new owner's ids continue after them), and the ids of the requests already answered in it (so a
 * request whose answer was stored is never answered twice). Plus the error that answers the
 * others: JSON-RPC -32001 "interrupted by failover; retry".
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { ClusterRedis } from './cluster-redis.js';
import { errorMessage, GatewayError } from '../errors.js';
import { requestKey, responseIdOf } from '../session/jsonrpc-id.js';

const PAGE = 1_000;
/** Entries read at most (the store keeps `eventStore.limit` ≤ 1,000,000 per session). */
const MAX_ENTRIES = 1_000_000;

export interface StoredHistory {
  readonly events: Array<{ readonly seq: number; readonly streamId: string }>;
  /** `requestKey` of every request whose response is in the history. */
  readonly answered: Set<string>;
}

export async function readHistory(client: ClusterRedis, key: string): Promise<StoredHistory> {
  const events: Array<{ seq: number; streamId: string }> = [];
  const answered = new Set<string>();
  let cursor = '-';
  while (events.length < MAX_ENTRIES) {
    const page = await client.xRange(key, cursor, '+', { COUNT: PAGE });
    for (const entry of page ?? []) {
      const seq = Number(entry.id.slice(entry.id.indexOf('-') + 1));
      const fields = entry.message as Record<string, string>;
      events.push({ seq, streamId: fields.s ?? '' });
      try {
        const id = responseIdOf(JSON.parse(fields.m ?? '{}'));
        if (id !== undefined) answered.add(requestKey(id));
      } catch {
        // not a message this store wrote; its sequence still counts
      }
      cursor = `(${entry.id}`;
    }
    if ((page ?? []).length < PAGE) break;
  }
  return { events, answered };
}

export const FAILOVER_MESSAGE = 'interrupted by failover; retry';

export function failoverError(id: string | number): JSONRPCMessage {
  return errorMessage(id, new GatewayError('FAILOVER_INTERRUPTED', FAILOVER_MESSAGE)) as JSONRPCMessage;
}
