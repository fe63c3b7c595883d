/**
 * The resume path of a 2025-era session (GET with `Last-Event-ID`), around the SDK transport:
 *
 * - `refusedResume` answers a resume point the store cannot honour: malformed or unknown id →
 *   400, history evicted → 410 Gone, store unreachable → 503; always with a JSON-RPC error body
 *   saying why. Checked before the transport sees the GET, because a store that throws during
 *   replay becomes an HTTP 500 in the SDK (PITFALLS.md).
 * - `LiveTailGate` closes the transport's gap between replay and live tail. The transport reads
 *   the history first and attaches the new connection to the stream only after that; an event
 *   stored in between is in neither (not yet connected, not in what was read) and would be
 *   skipped silently. While a stream is held, its events are stored at once but `storeEvent`
 *   resolves only after release, in order, so the transport writes them to the new connection
 *   (it skips ids the replay already sent).
 */
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';
import { jsonRpcErrorResponse, WireCode } from '../errors.js';
import type { ResumePoint, SessionEventStore } from '../session/event-store.js';

const STATUS: Readonly<Record<Exclude<ResumePoint, { ok: true }>['code'], number>> = {
  malformed: 400,
  unknown: 400,
  evicted: 410,
  unavailable: 503,
};

/** The HTTP answer to a resume point that cannot be resumed from. */
export function refusedResume(point: Exclude<ResumePoint, { ok: true }>): Response {
  const code = point.code === 'unavailable' ? WireCode.InternalError : WireCode.InvalidRequest;
  return jsonRpcErrorResponse(STATUS[point.code], code, point.message);
}

export class LiveTailGate {
  /** Per held (or still draining) stream: resolves when its queued events may be delivered. */
  private readonly chains = new Map<string, Promise<unknown>>();

  /** The SDK-facing store: `store` with `storeEvent` held back for held streams. */
  wrap(store: SessionEventStore): EventStore {
    return {
      storeEvent: (streamId: string, message: JSONRPCMessage) => {
        // Stored now, whatever the gate: the order of storage is the order of calls.
        const stored = store.storeEvent(streamId, message);
        const chain = this.chains.get(streamId);
        if (chain === undefined) return stored;
        const delivered = Promise.all([chain, stored]).then(([, id]) => id);
        this.link(streamId, delivered);
        return delivered;
      },
      getStreamIdForEventId: (eventId) => store.getStreamIdForEventId(eventId),
      replayEventsAfter: (lastEventId, options) => store.replayEventsAfter(lastEventId, options),
    };
  }

  /** Holds `streamId`'s live events until the returned release is called (idempotent). */
  hold(streamId: string): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const chain = this.chains.get(streamId);
    this.link(streamId, chain === undefined ? held : Promise.all([chain, held]));
    return release;
  }

  private link(streamId: string, next: Promise<unknown>): void {
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(streamId, settled);
    void settled.then(() => {
      if (this.chains.get(streamId) === settled) this.chains.delete(streamId);
    });
  }
}
