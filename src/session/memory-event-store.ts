/**
 * The in-process event store (the default kind). Per session: one FIFO of stream ids in insert
 * order (what to evict next) and one FIFO of events per stream, so appending and evicting are
 * O(1) and a replay is a binary search plus a walk over exactly the events it sends — no sort,
 * no timestamps. Sessions with history are bounded by an LRU (least recently written dropped
 * first); a dropped or forgotten session's history is cleared, its counter keeps going.
 *
 * Bytes are bounded too (`history-budget.ts`): events are kept as their serialised JSON text
 * (what the budget counts, and far smaller than the object graph a 15 MiB answer parses into),
 * at most `maxSessionBytes` per session and `maxTotalBytes` for the process, oldest first.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { LRUCache } from 'lru-cache';
import type { GatewayEventStore, SessionEventStore } from './event-store.js';
import { formatEventId, judgeResume, parseEventId, ResumeRefused, resumeProblem, SessionSequence, type Assigned, type ResumePoint } from './event-id.js';
import { createHistoryBudget, DEFAULT_HISTORY_BUDGET, type HistoryAccount, type HistoryBudget } from './history-budget.js';

export interface MemoryEventStoreOptions {
  /** Events kept per session. */
  limit: number;
  /** Sessions with history kept at once. */
  maxSessions: number;
  /** Bytes of history kept per session; default 16 MiB. */
  maxSessionBytes?: number;
  /** Bytes of history kept for every session together; default 256 MiB. */
  maxTotalBytes?: number;
}

/** A queue that remembers how many items ever left it, so positions stay valid across shifts. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  /** Position (counted from the first item ever pushed) of the current first item. */
  private shifted = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  get firstPosition(): number {
    return this.shifted;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.items[this.head];
    this.head += 1;
    this.shifted += 1;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** The item at an absolute position, if still queued. */
  at(position: number): T | undefined {
    if (position < this.shifted) return undefined;
    return this.items[this.head + position - this.shifted];
  }
}

interface StoredEvent extends Assigned {
  /** The message as JSON text. */
  readonly text: string;
}

/** The SDK stores an empty object for the SSE priming event: it has an id, nothing to replay. */
const PRIMING_TEXT = '{}';

class SessionHistory {
  readonly sequence = new SessionSequence();
  private readonly streams = new Map<string, Fifo<StoredEvent>>();
  private order = new Fifo<string>();
  /** Every event up to this sequence was dropped with the whole history (LRU), not one by one. */
  private droppedThrough = 0;
  private readonly account: HistoryAccount;

  constructor(
    private limit: number,
    budget: HistoryBudget,
  ) {
    this.account = budget.open(() => this.evictOldest());
  }

  get size(): number {
    return this.order.length;
  }

  lowerLimit(limit: number): void {
    this.limit = Math.min(this.limit, limit);
  }

  get bytes(): number {
    return this.account.bytes;
  }

  append(streamId: string, message: JSONRPCMessage): number {
    const assigned = this.sequence.next(streamId);
    const text = JSON.stringify(message);
    let events = this.streams.get(streamId);
    if (events === undefined) {
      events = new Fifo<StoredEvent>();
      this.streams.set(streamId, events);
    }
    events.push({ ...assigned, text });
    this.order.push(streamId);
    while (this.order.length > this.limit) {
      this.evictOldest();
      this.account.droppedOldest();
    }
    // May evict this session's oldest events, or other sessions' (the process budget).
    this.account.record(Buffer.byteLength(text, 'utf8'));
    return assigned.seq;
  }

  /** The stream's events and the position of its first event after `seq` (end when none). */
  after(streamId: string, seq: number): { events: Fifo<StoredEvent>; position: number } | undefined {
    const events = this.streams.get(streamId);
    if (events === undefined) return undefined;
    let low = events.firstPosition;
    let high = low + events.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((events.at(mid)?.seq ?? Infinity) > seq) high = mid;
      else low = mid + 1;
    }
    return { events, position: low };
  }

  judge(lastEventId: string): ResumePoint {
    const point = parseEventId(lastEventId);
    if (point === undefined) return resumeProblem('malformed');
    const found = this.after(point.streamId, point.seq);
    const verdict = judgeResume(point, found?.events.at(found.position), this.sequence.lastOf(point.streamId));
    // The stream links went with a dropped history: an id from before the drop was evicted.
    if (!verdict.ok && verdict.code === 'unknown' && point.seq <= this.droppedThrough) return resumeProblem('evicted');
    return verdict;
  }

  /** Drops every event; the counter keeps going so no id is ever reused. */
  clear(): void {
    this.droppedThrough = this.sequence.last;
    this.streams.clear();
    this.order = new Fifo<string>();
    this.sequence.forgetStreams();
    this.account.clear();
  }

  private evictOldest(): void {
    const streamId = this.order.shift();
    if (streamId === undefined) return;
    const events = this.streams.get(streamId);
    events?.shift();
    if (events !== undefined && events.length === 0) this.streams.delete(streamId);
  }
}

export function createMemoryEventStore(options: MemoryEventStoreOptions): GatewayEventStore {
  const { limit, maxSessions } = options;
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError('eventStore.limit must be a positive integer');
  if (!Number.isInteger(maxSessions) || maxSessions < 1) throw new TypeError('maxSessions must be a positive integer');
  const budget = createHistoryBudget({
    maxSessionBytes: options.maxSessionBytes ?? DEFAULT_HISTORY_BUDGET.maxSessionBytes,
    maxTotalBytes: options.maxTotalBytes ?? DEFAULT_HISTORY_BUDGET.maxTotalBytes,
  });

  const histories = new LRUCache<string, SessionHistory>({
    max: maxSessions,
    dispose: (history) => history.clear(),
  });

  // What a session that has stored nothing yet is judged against: never written to.
  const empty = new SessionHistory(1, budget);

  const forSession = (sessionId: string): SessionEventStore => {
    // Created on the first event: a session whose calls are all answered in one JSON body never
    // stores one, and then holds no history at all (memory per idle session: docs/performance.md).
    let history: SessionHistory | undefined;
    let sessionLimit = limit;
    let forgotten = false;
    const current = (): SessionHistory => history ?? empty;

    return {
      async storeEvent(streamId, message) {
        history ??= new SessionHistory(sessionLimit, budget);
        if (forgotten) return formatEventId(streamId, history.sequence.next(streamId).seq);
        // get() marks the session recently written; a session dropped by the LRU comes back.
        if (histories.get(sessionId) !== history) histories.set(sessionId, history);
        return formatEventId(streamId, history.append(streamId, message));
      },

      lowerLimit(value) {
        sessionLimit = Math.max(1, Math.min(sessionLimit, value));
        history?.lowerLimit(sessionLimit);
      },

      async getStreamIdForEventId(eventId) {
        const point = current().judge(eventId);
        return point.ok ? point.streamId : undefined;
      },

      async resumePoint(lastEventId) {
        return forgotten ? resumeProblem('unknown') : current().judge(lastEventId);
      },

      async replayEventsAfter(lastEventId, { send }) {
        const stored = current();
        const point = stored.judge(lastEventId);
        if (!point.ok) throw new ResumeRefused(point);
        const found = stored.after(point.streamId, point.seq);
        if (found === undefined) return point.streamId;
        // Walk by absolute position: events appended while `send` awaits are sent too, and an
        // eviction overtaking the walk is an error rather than a silent gap.
        for (let position = found.position; ; position += 1) {
          if (position < found.events.firstPosition) throw new ResumeRefused(resumeProblem('evicted'));
          const event = found.events.at(position);
          if (event === undefined) break;
          if (event.text !== PRIMING_TEXT) await send(formatEventId(point.streamId, event.seq), JSON.parse(event.text) as JSONRPCMessage);
        }
        return point.streamId;
      },

      async retained() {
        return forgotten || history === undefined ? 0 : history.size;
      },

      async forget() {
        forgotten = true;
        if (history === undefined) return;
        if (histories.peek(sessionId) === history) histories.delete(sessionId);
        history.clear();
      },
    };
  };

  return {
    kind: 'memory',
    retained: () => ({ events: budget.totalEvents, bytes: budget.totalBytes }),
    forSession,
    async start() {},
    async close() {
      histories.clear();
    },
  };
}

