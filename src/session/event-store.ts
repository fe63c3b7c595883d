/**
 * The event store contract behind 2025-era resumability (docs/decisions.md, "Sessions and
 * resumability"), and the factory that
 * picks the configured kind. One `GatewayEventStore` serves the whole gateway; each session gets
 * its own `SessionEventStore` view (the SDK's `EventStore` has no session argument), so
 * history is bounded and dropped per session:
 *
 * - ids are `<streamId>::<seq>` with one counter per session (`event-id.ts`);
 * - at most `limit` events per session, the oldest evicted first (insert order);
 * - at most `maxSessionBytes` of serialised events per session and `maxTotalBytes` for the whole
 *   process, the oldest evicted first, across sessions for the total (`history-budget.ts`);
 * - replay sends exactly the events of the resumed stream after the id, in order; the SDK's
 *   empty priming events are stored (they carry ids) but never replayed;
 * - `resumePoint` tells a sound resume point from a malformed, unknown or evicted one, so the
 *   caller answers 400 / 410 itself (a store that throws during replay becomes an HTTP 500 in
 *   the SDK).
 */
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/server';
import type { GatewayConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { createMemoryEventStore } from './memory-event-store.js';
import type { ResumePoint } from './event-id.js';

export type { ResumePoint, ResumeProblem } from './event-id.js';

/** One session's view of the store: the SDK `EventStore`, plus the resume check and `forget`. */
export interface SessionEventStore extends EventStore {
  getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined>;
  /** Whether a GET carrying `lastEventId` can be resumed; never throws. */
  resumePoint(lastEventId: string): Promise<ResumePoint>;
  /** Events held for this session right now (bounded by `limit`). */
  retained(): Promise<number>;
  /**
   * Lowers this session's event count limit (init option `eventStoreLimit`); never raises it
   * above the store's `limit`. Events already kept beyond it go with the next event stored.
   */
  lowerLimit(limit: number): void;
  /** Drops the session's history (session closed). Idempotent; later events are not kept. */
  forget(): Promise<void>;
  /**
   * Shared stores only (redis): leaves the session's history in the store for another replica
   * (the session closed here without being ended) and stops counting it against this process's
   * byte budget, so this process never trims a history it no longer owns.
   */
  release?(): void;
  /**
   * Shared stores only (redis): continues a history another replica wrote, given its events in
   * order, so new ids follow the last one and resume checks know each stream (cluster takeover).
   */
  adopt?(history: Iterable<{ readonly seq: number; readonly streamId: string }>): void;
}

/** The gateway-wide store: one per process, one view per session. */
export interface GatewayEventStore {
  readonly kind: 'memory' | 'redis';
  forSession(sessionId: string): SessionEventStore;
  /**
   * Waits (bounded) for the store to be usable, e.g. a first Redis connection, so the first
   * sessions' events are not lost to a connection still opening. Never rejects: a store that is
   * not reachable yet keeps trying, and streams work without resumability meanwhile.
   */
  start(): Promise<void>;
  /** Drops every history it holds in memory and closes its connection, if any. */
  close(): Promise<void>;
  /** Events and bytes this process keeps in its history ledger now (history-budget.ts). */
  retained(): { events: number; bytes: number };
}

/** The event store section; byte budgets absent take the default policy's (library use, tests). */
export type EventStoreConfig = Omit<GatewayConfig['eventStore'], 'maxSessionBytes' | 'maxTotalBytes'> &
  Partial<Pick<GatewayConfig['eventStore'], 'maxSessionBytes' | 'maxTotalBytes'>>;

export interface EventStoreDeps {
  logger: Logger;
  /** Sessions whose history is kept at once (memory kind); the least recently written go first. */
  maxSessions: number;
  /** A session's history outlives its last event by this long at most (redis kind: key TTL). */
  historyTtlMs: number;
  /** Redis key prefix (default `portcullis:events:`); tests use a unique one per run. */
  keyPrefix?: string;
}

/**
 * Builds the configured store. Rejects with `TypeError` on an option it cannot use. The redis
 * kind's module and the `redis` client (~9 MB of a default gateway's idle RSS, measured) are
 * loaded only when configured.
 */
export async function createEventStore(config: Readonly<EventStoreConfig>, deps: EventStoreDeps): Promise<GatewayEventStore> {
  switch (config.kind) {
    case 'memory':
      return createMemoryEventStore({
        limit: config.limit,
        maxSessions: deps.maxSessions,
        maxSessionBytes: config.maxSessionBytes,
        maxTotalBytes: config.maxTotalBytes,
      });
    case 'redis': {
      if (config.url === undefined) throw new TypeError('eventStore.url is required when eventStore.kind is "redis"');
      const { createRedisEventStore } = await import('./redis-event-store.js');
      return createRedisEventStore({
        url: config.url,
        limit: config.limit,
        maxSessionBytes: config.maxSessionBytes,
        maxTotalBytes: config.maxTotalBytes,
        historyTtlMs: deps.historyTtlMs,
        keyPrefix: deps.keyPrefix,
        allowPrivateNetwork: config.allowPrivateNetwork,
        logger: deps.logger,
      });
    }
    default: {
      const unreachable: never = config.kind;
      throw new TypeError(`unknown event store kind ${String(unreachable)}`);
    }
  }
}
