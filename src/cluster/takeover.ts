/**
 * Taking a session over from a replica whose lease expired (the caller has already claimed the
 * lease with SET NX, so exactly one replica runs this per failover):
 *
 * 1. read the dead owner's history, continue the session's event numbering after it (no id is
 *    reused, every old event stays resumable);
 * 2. answer each request the dead owner accepted but never answered with a JSON-RPC error
 *    (-32001 "interrupted by failover; retry") appended to the stream it was being answered on,
 *    so a client resuming that stream with `Last-Event-ID` receives it; a request whose response
 *    is already in the history is skipped (answered exactly once);
 * 3. rebuild the session under the same id by replaying the client's handshake; upstream
 *    connections (stdio children included) are created anew by the session's scope.
 */
import type { ClusterRedis } from './cluster-redis.js';
import type { Logger } from '../observability/logger.js';
import type { GatewayEventStore, SessionEventStore } from '../session/event-store.js';
import type { ClusterKeys } from './cluster-keys.js';
import { failoverError, readHistory } from './failover-history.js';
import { replayInitialize, type RebuildableSession } from './replay-initialize.js';
import type { SessionRecord } from './session-record.js';
import { sessionTag } from '../observability/session-tag.js';

export interface TakeoverDeps {
  client: ClusterRedis;
  keys: ClusterKeys;
  store: GatewayEventStore;
  logger: Logger;
  /** Makes the next `forSession(id)` of the session's transport return `view`, and replays quietly. */
  prepare(sessionId: string, view: SessionEventStore): () => void;
}

/** Steps 1 and 2: the session's store view, continued, with the failover errors appended. */
export async function continueHistory(deps: TakeoverDeps, sessionId: string): Promise<{ view: SessionEventStore; interrupted: number }> {
  const { client, keys, store } = deps;
  const history = await readHistory(client, `${keys.events}${sessionId}`);
  const pending = await client.hGetAll(keys.inflight(sessionId));
  const view = store.forSession(sessionId);
  view.adopt?.(history.events);
  let interrupted = 0;
  for (const [field, streamId] of Object.entries(pending)) {
    if (history.answered.has(field)) continue;
    let id: unknown;
    try {
      id = JSON.parse(field);
    } catch {
      continue;
    }
    if (typeof id !== 'string' && typeof id !== 'number') continue;
    await view.storeEvent(streamId, failoverError(id));
    interrupted += 1;
  }
  // Issued after the appends on the same connection: Redis applies them in that order.
  await client.del(keys.inflight(sessionId));
  return { view, interrupted };
}

/**
 * All three steps. `open` builds and starts a session with the given principal and id (its
 * transport's store view is the prepared one). Resolves with the rebuilt session, or undefined
 * when the handshake could not be replayed (the session is closed again).
 */
export async function takeOver<S extends RebuildableSession & { close(): Promise<void> }>(
  deps: TakeoverDeps,
  record: SessionRecord,
  open: (principal: string | undefined, sessionId: string) => Promise<S>,
): Promise<S | undefined> {
  const { view, interrupted } = await continueHistory(deps, record.sessionId);
  const done = deps.prepare(record.sessionId, view);
  try {
    const session = await open(record.principal, record.sessionId);
    if (await replayInitialize(session, record.sessionId, record.initialize)) {
      deps.logger.info({ session: sessionTag(record.sessionId), from: record.owner, interrupted }, 'session taken over');
      return session;
    }
    await session.close();
    deps.logger.warn({ session: sessionTag(record.sessionId) }, 'session takeover failed: handshake replay refused');
    return undefined;
  } finally {
    done();
  }
}
