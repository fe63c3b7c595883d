/**
 * The Redis event store: one Redis Stream per session (`<prefix><sessionId>`), entry id
 * `0-<seq>` (the session counter, never a time), fields `s` (stream), `p` (previous sequence on
 * that stream) and `m` (the message). `XADD … MAXLEN = limit` keeps at most `limit` events per
 * session, oldest first; replay reads `XRANGE (0-<seq> +` in pages and keeps the resumed
 * stream's entries; every write refreshes a TTL so history expires with an idle session, and
 * closing the session deletes the key.
 *
 * One connection for the whole gateway (`redis-event-connection.ts`). Redis being down never
 * blocks or breaks the live stream: writes are fire-and-forget on that connection (Redis runs one
 * connection's commands in order, so a replay read always sees every write issued before it), a
 * write fails at once while disconnected, the outage is logged once, and a resume answers
 * "unavailable" until Redis is back. Events lost meanwhile break the `prev` links of their
 * stream, so resuming across them is refused as evicted, never replayed with a gap.
 *
 * Bytes are bounded as in the memory store (`history-budget.ts`): this process keeps a ledger of
 * the serialised size of every event it wrote, and evicting one trims the session's stream
 * below the next retained entry (`XTRIM … MINID`), so Redis holds at most `maxSessionBytes` per
 * session and `maxTotalBytes` for what this process wrote. That also bounds every Redis reply
 * this store reads: a replay page or a takeover's history read is never larger than one
 * session's budget (plus, after a takeover, what the previous owner kept within its own).
 * Events a takeover adopted are not in the ledger; the first eviction trims them first.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { Logger } from '../observability/logger.js';
import type { GatewayEventStore, SessionEventStore } from './event-store.js';
import { connectEventStoreRedis } from './redis-event-connection.js';
import { formatEventId, judgeResume, parseEventId, ResumeRefused, resumeProblem, SessionSequence, type ParsedEventId, type ResumePoint } from './event-id.js';
import { createHistoryBudget, DEFAULT_HISTORY_BUDGET } from './history-budget.js';

export interface RedisEventStoreOptions {
  /** `redis://…` URL; it is never logged (it may carry a password). */
  url: string;
  /** Events kept per session. */
  limit: number;
  /** Bytes of history kept per session; default 16 MiB. */
  maxSessionBytes?: number;
  /** Bytes of history this process keeps in Redis for every session together; default 256 MiB. */
  maxTotalBytes?: number;
  /** TTL of a session's key, refreshed as events are written. */
  historyTtlMs: number;
  /** Prefix of every key this store writes (default `portcullis:events:`). */
  keyPrefix?: string | undefined;
  /** `eventStore.allowPrivateNetwork`: may the connection reach loopback and private addresses? */
  allowPrivateNetwork: boolean;
  logger: Logger;
}

const DEFAULT_PREFIX = 'portcullis:events:';
/** Entries read per XRANGE while replaying or checking a resume point. */
const PAGE = 512;

interface Entry {
  seq: number;
  prev: number;
  streamId: string;
  message: string;
}

function entryOf(raw: { id: string; message: Record<string, string> }): Entry {
  return {
    seq: Number(raw.id.slice(raw.id.indexOf('-') + 1)),
    prev: Number(raw.message.p ?? 0),
    streamId: raw.message.s ?? '',
    message: raw.message.m ?? '{}',
  };
}

function isPrimingEvent(message: JSONRPCMessage): boolean {
  return Object.keys(message).length === 0;
}

export function createRedisEventStore(options: RedisEventStoreOptions): GatewayEventStore {
  const { limit, historyTtlMs, logger } = options;
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError('eventStore.limit must be a positive integer');
  if (!Number.isInteger(historyTtlMs) || historyTtlMs < 1) throw new TypeError('historyTtlMs must be a positive integer');
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new TypeError('eventStore.url is not a valid URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new TypeError('eventStore.url must be a redis:// or rediss:// URL');
  const prefix = options.keyPrefix ?? DEFAULT_PREFIX;
  const budget = createHistoryBudget({
    maxSessionBytes: options.maxSessionBytes ?? DEFAULT_HISTORY_BUDGET.maxSessionBytes,
    maxTotalBytes: options.maxTotalBytes ?? DEFAULT_HISTORY_BUDGET.maxTotalBytes,
  });

  const { client, health, start, close } = connectEventStoreRedis({ url: options.url, allowPrivateNetwork: options.allowPrivateNetwork, logger });

  /** Up to {@link PAGE} entries of `key` after sequence `after`, in order. */
  async function page(key: string, after: number): Promise<Entry[]> {
    const raw = await client.xRange(key, `(0-${after}`, '+', { COUNT: PAGE });
    return (raw ?? []).map(entryOf);
  }

  /** The first entry of `point`'s stream after it, scanning at most the key's length. */
  async function firstAfter(key: string, point: ParsedEventId): Promise<Entry | undefined> {
    let cursor = point.seq;
    for (;;) {
      const entries = await page(key, cursor);
      for (const entry of entries) {
        if (entry.streamId === point.streamId) return entry;
        cursor = entry.seq;
      }
      if (entries.length < PAGE) return undefined;
    }
  }

  const forSession = (sessionId: string): SessionEventStore => {
    const key = `${prefix}${sessionId}`;
    const sequence = new SessionSequence();
    let limit = options.limit;
    let forgotten = false;
    let ttlRefreshedAt = Number.NEGATIVE_INFINITY;
    /** The last `resumePoint` verdict: the transport asks again for the same id right after. */
    let judged: { id: string; point: ResumePoint } | undefined;
    /** Sequences of the entries in the ledger, oldest first (parallel to the account's). */
    const kept: number[] = [];
    let keptHead = 0;
    /** Entries below this sequence are to be trimmed from the key (one XTRIM per batch). */
    let trimBelow = 0;
    let trimQueued = false;
    /** The history was left to another replica: this process no longer counts or trims it. */
    let released = false;
    const shiftKept = (): number | undefined => {
      if (keptHead >= kept.length) return undefined;
      const seq = kept[keptHead]!;
      keptHead += 1;
      if (keptHead >= 1024 && keptHead * 2 >= kept.length) {
        kept.splice(0, keptHead);
        keptHead = 0;
      }
      return seq;
    };
    const trim = (): void => {
      trimQueued = false;
      if (forgotten || released) return;
      // After the XADD that caused it (one connection runs commands in order).
      client.xTrim(key, 'MINID', `0-${trimBelow}`).then(() => health.succeeded(), (error: unknown) => health.failed(error));
    };
    const account = budget.open(() => {
      const seq = shiftKept();
      if (seq === undefined) return;
      trimBelow = Math.max(trimBelow, seq + 1);
      if (!trimQueued) {
        trimQueued = true;
        queueMicrotask(trim);
      }
    });

    /** Pushes the key's expiry out again, at most every quarter TTL (the session is in use). */
    const refreshTtl = (): void => {
      const now = Date.now();
      if (now - ttlRefreshedAt < historyTtlMs / 4) return;
      ttlRefreshedAt = now;
      client.pExpire(key, historyTtlMs).then(
        (set) => {
          if (set !== 1) ttlRefreshedAt = Number.NEGATIVE_INFINITY; // no key yet: retry next time
        },
        () => (ttlRefreshedAt = Number.NEGATIVE_INFINITY),
      );
    };

    const write = (streamId: string, seq: number, prev: number, message: JSONRPCMessage): void => {
      const text = JSON.stringify(message);
      const fields = { s: streamId, p: String(prev), m: text };
      try {
        client
          .xAdd(key, `0-${seq}`, fields, { TRIM: { strategy: 'MAXLEN', strategyModifier: '=', threshold: limit } })
          .then(() => health.succeeded(), (error: unknown) => health.failed(error));
        refreshTtl();
      } catch (error) {
        health.failed(error);
        return;
      }
      if (released) return;
      kept.push(seq);
      // MAXLEN dropped the oldest entry in Redis itself.
      if (kept.length - keptHead > limit) {
        shiftKept();
        account.droppedOldest();
      }
      account.record(Buffer.byteLength(text, 'utf8'));
    };

    const judge = async (lastEventId: string): Promise<ResumePoint> => {
      const point = parseEventId(lastEventId);
      if (point === undefined) return resumeProblem('malformed');
      if (forgotten || point.seq > sequence.last) return resumeProblem('unknown');
      // Read before the scan is issued: the scan sees exactly the writes issued before it.
      const last = sequence.lastOf(point.streamId);
      try {
        refreshTtl();
        const next = await firstAfter(key, point);
        return judgeResume(point, next, last);
      } catch (error) {
        health.failed(error);
        return resumeProblem('unavailable');
      }
    };

    return {
      async storeEvent(streamId, message) {
        const { seq, prev } = sequence.next(streamId);
        if (!forgotten) write(streamId, seq, prev, message);
        return formatEventId(streamId, seq);
      },

      async getStreamIdForEventId(eventId) {
        const recent = judged?.id === eventId ? judged.point : undefined;
        judged = undefined;
        const point = recent ?? (await judge(eventId));
        return point.ok ? point.streamId : undefined;
      },

      async resumePoint(lastEventId) {
        const point = await judge(lastEventId);
        judged = { id: lastEventId, point };
        return point;
      },

      async replayEventsAfter(lastEventId, { send }) {
        const point = parseEventId(lastEventId);
        if (point === undefined) throw new ResumeRefused(resumeProblem('malformed'));
        const last = sequence.lastOf(point.streamId); // before the first read, as in `judge`
        // Each entry must name the one sent before it (`prev`): a missing link is a gap.
        let expectPrev = point.seq;
        let cursor = point.seq;
        for (;;) {
          let entries: Entry[];
          try {
            entries = await page(key, cursor);
          } catch (error) {
            health.failed(error);
            throw new ResumeRefused(resumeProblem('unavailable'));
          }
          for (const entry of entries) {
            cursor = entry.seq;
            if (entry.streamId !== point.streamId) continue;
            if (entry.prev !== expectPrev) {
              // Trimmed (count or byte budget) or lost between the check and this read.
              const verdict = judgeResume({ streamId: point.streamId, seq: expectPrev }, entry, undefined);
              throw new ResumeRefused(verdict.ok ? resumeProblem('evicted') : verdict);
            }
            expectPrev = entry.seq;
            const message = JSON.parse(entry.message) as JSONRPCMessage;
            if (!isPrimingEvent(message)) await send(formatEventId(point.streamId, entry.seq), message);
          }
          if (entries.length < PAGE) break;
        }
        if (expectPrev === point.seq) {
          const verdict = judgeResume(point, undefined, last);
          if (!verdict.ok) throw new ResumeRefused(verdict);
        }
        return point.streamId;
      },

      async retained() {
        return forgotten ? 0 : client.xLen(key);
      },

      lowerLimit(value) {
        limit = Math.max(1, Math.min(limit, value));
      },

      adopt(history) {
        for (const event of history) sequence.observe(event.streamId, event.seq);
      },

      release() {
        released = true;
        account.clear();
        kept.length = 0;
        keptHead = 0;
      },

      async forget() {
        if (forgotten) return;
        forgotten = true;
        account.clear();
        kept.length = 0;
        keptHead = 0;
        await client.del(key).catch((error: unknown) => health.failed(error));
      },
    };
  };

  return {
    kind: 'redis',
    retained: () => ({ events: budget.totalEvents, bytes: budget.totalBytes }),
    forSession,
    start,
    close,
  };
}
