/**
 * The event store as a cluster replica uses it: the shared (redis) store, with three changes.
 *
 * - A session being rebuilt after takeover gets the view the takeover prepared (its sequence
 *   already continued after the dead owner's events); the synthetic handshake's events are not
 *   stored at all (nobody can resume them, and they would only take sequence numbers).
 * - A stored JSON-RPC response clears its request from the in-flight record: it is answered.
 * - `forget` (session closed) drops the history only while this replica owns the session and is
 *   not shutting down: a lost lease or a draining replica leaves the history to the next owner
 *   (and stops counting it against its own byte budget).
 */
import type { GatewayEventStore, SessionEventStore } from '../session/event-store.js';
import { formatEventId } from '../session/event-id.js';
import { responseIdOf } from '../session/jsonrpc-id.js';

/** What the wrapper asks the cluster. */
export interface ClusterStoreHooks {
  /** The view a takeover prepared for `sessionId`, handed out once. */
  takePrepared(sessionId: string): SessionEventStore | undefined;
  /** True while `sessionId`'s handshake is being replayed. */
  replaying(sessionId: string): boolean;
  /** A response to request `id` was stored for `sessionId`. */
  answered(sessionId: string, id: string | number): void;
  /** The session closed; resolves true when its history should be dropped (and drops its keys). */
  closed(sessionId: string): Promise<boolean>;
}

/** Stream id the replayed handshake's events are labelled with (never stored). */
const REPLAY_STREAM = '_portcullis_replay';

export function clusterEventStore(inner: GatewayEventStore, hooks: ClusterStoreHooks): GatewayEventStore {
  const forSession = (sessionId: string): SessionEventStore => {
    const view = hooks.takePrepared(sessionId) ?? inner.forSession(sessionId);
    return {
      async storeEvent(streamId, message) {
        if (hooks.replaying(sessionId)) return formatEventId(REPLAY_STREAM, 1);
        const id = await view.storeEvent(streamId, message);
        const answered = responseIdOf(message);
        if (answered !== undefined) hooks.answered(sessionId, answered);
        return id;
      },
      getStreamIdForEventId: (eventId) => view.getStreamIdForEventId(eventId),
      replayEventsAfter: (lastEventId, options) => view.replayEventsAfter(lastEventId, options),
      resumePoint: (lastEventId) => view.resumePoint(lastEventId),
      retained: () => view.retained(),
      lowerLimit: (limit) => view.lowerLimit(limit),
      async forget() {
        if (await hooks.closed(sessionId)) await view.forget();
        else view.release?.();
      },
    };
  };
  return {
    kind: inner.kind,
    forSession,
    retained: () => inner.retained(),
    start: () => inner.start(),
    close: () => inner.close(),
  };
}
