/**
 * The session hooks (session/session-hooks.ts) of one endpoint of a cluster replica. For a
 * session id not held here it asks the directory where the session lives: another live replica
 * (the request is forwarded there, SSE streamed back), nobody (the owner's lease expired: claim
 * it and take the session over), or nowhere (404). It writes the session record when a session
 * is initialised here, and records each request in flight for failover.
 */
import { errorResponse, GatewayError, refusal } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { GatewayEventStore, SessionEventStore } from '../session/event-store.js';
import { requestKey } from '../session/jsonrpc-id.js';
import type { SessionHooks, SharedSession, UnknownSession } from '../session/session-hooks.js';
import type { ClusterKeys } from './cluster-keys.js';
import type { ClusterRedis } from './cluster-redis.js';
import { checkForwarded, forwardRequest, HOP_HEADER, type ForwardOptions } from './forward.js';
import { mintProof } from './principal-proof.js';
import { tapInflight } from './inflight-tap.js';
import type { Leases } from './leases.js';
import { decodeRecord, encodeRecord, initializeParamsOf, type SessionRecord } from './session-record.js';
import { takeOver } from './takeover.js';

/** What the hooks share with the replica that made them (cluster.ts). */
export interface ReplicaState {
  readonly replicaId: string;
  readonly keys: ClusterKeys;
  readonly leaseMs: number;
  /** Session records and in-flight hashes live this long past the owner's last heartbeat. */
  readonly idleTimeoutMs: number;
  /** Required on forwarded requests when set. */
  readonly secret: string | undefined;
  readonly logger: Logger;
  readonly client: ClusterRedis;
  readonly leases: Leases;
  readonly forwarding: ForwardOptions;
  /** Sessions this replica owns → how to let go of one locally. */
  readonly owned: Map<string, () => void>;
  /** A session being taken over → the store view its transport must use (continued history). */
  readonly prepared: Map<string, SessionEventStore>;
  /** Sessions whose handshake is being replayed (nothing of it is stored). */
  readonly replaying: Set<string>;
  /** Takeovers under way, one per session id. */
  readonly adopting: Map<string, Promise<unknown>>;
  innerStore(): GatewayEventStore;
  /** Redis trouble: logged once until it recovers. */
  failed(error: unknown): void;
}

const notFound = () => refusal('SESSION_NOT_FOUND', 'Session not found');
const retryLater = (why: string) => refusal('CLUSTER_UNAVAILABLE', `${why}; retry`);

export function endpointHooks(label: string, replica: ReplicaState): SessionHooks {
  return {
    refuse: (request) => {
      const check = checkForwarded(request, replica.secret);
      return check.ok ? undefined : refusal('FORWARD_REFUSED', check.message);
    },
    unknown: (args) => route(replica, label, args),
    opened: (session, body, drop) => opened(replica, label, session, body, drop),
    response: (sessionId, body, response) => tap(replica, sessionId, body, response),
  };
}

async function route<S extends SharedSession>(replica: ReplicaState, label: string, args: UnknownSession<S>): Promise<Response | S> {
  const { request, sessionId, principal } = args;
  const { client, keys, leases } = replica;
  try {
    const record = decodeRecord(sessionId, await client.hGetAll(keys.session(sessionId)));
    // Another principal, or a session of another endpoint, learns nothing: exactly like an unknown id.
    if (record === undefined || record.endpoint !== label || record.principal !== principal) return notFound();
    const forwarded = request.headers.has(HOP_HEADER);
    // A forwarded request never takes a session over: it carries the principal and the key of its
    // token's access profile, not the token, so the replica the client reached, which saw the whole
    // credential, does that.
    if (forwarded) return retryLater('the session is moving between replicas');
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const owner = await leases.ownerOf(sessionId);
      if (owner === replica.replicaId || (owner === null && (await leases.claim(sessionId)))) {
        return await adoptOnce(replica, record, args);
      }
      if (owner === null) continue; // another replica claimed it first: look again
      const url = await leases.urlOf(owner);
      if (url === null) return retryLater('the replica owning this session is not reachable');
      const secret = replica.secret;
      const binding = { sessionId, method: request.method, path: new URL(request.url).pathname };
      const proof = secret === undefined ? undefined : mintProof(secret, principal, binding, Date.now(), args.access);
      return await forwardRequest(request, args.parsedBody, url, replica.forwarding, proof);
    }
    return retryLater('the session is moving between replicas');
  } catch (error) {
    // Only Redis trouble marks the directory unhealthy; a full session budget is just busy.
    if (error instanceof GatewayError && (error.code === 'SESSION_LIMIT' || error.code === 'PRINCIPAL_SESSION_LIMIT')) return errorResponse(error);
    replica.failed(error);
    return retryLater('the session directory is unavailable');
  }
}

function adoptOnce<S extends SharedSession>(replica: ReplicaState, record: SessionRecord, args: UnknownSession<S>): Promise<Response | S> {
  const { sessionId } = record;
  let adopting = replica.adopting.get(sessionId) as Promise<Response | S> | undefined;
  if (adopting === undefined) {
    adopting = adopt(replica, record, args).finally(() => replica.adopting.delete(sessionId));
    replica.adopting.set(sessionId, adopting);
  }
  return adopting;
}

async function adopt<S extends SharedSession>(replica: ReplicaState, record: SessionRecord, args: UnknownSession<S>): Promise<Response | S> {
  const { client, keys } = replica;
  const deps = {
    client,
    keys,
    store: replica.innerStore(),
    logger: replica.logger,
    prepare: (id: string, view: SessionEventStore) => {
      replica.prepared.set(id, view);
      replica.replaying.add(id);
      return () => {
        replica.prepared.delete(id);
        replica.replaying.delete(id);
      };
    },
  };
  // Renewed from the moment it is claimed: a takeover can take as long as a lease.
  replica.owned.set(record.sessionId, () => args.drop(record.sessionId));
  let session: S | undefined;
  try {
    session = await takeOver(deps, record, args.adopt);
  } finally {
    if (session === undefined) replica.owned.delete(record.sessionId);
  }
  if (session === undefined) {
    // The replayed initialize may have registered the session before the handshake failed.
    args.drop(record.sessionId);
    return retryLater('the session could not be rebuilt');
  }
  await client.hSet(keys.session(record.sessionId), 'owner', replica.replicaId);
  return session;
}

async function opened(replica: ReplicaState, label: string, session: SharedSession, body: unknown, drop: () => void): Promise<void> {
  const params = initializeParamsOf(body);
  if (params === undefined) return;
  const sessionId = session.id;
  replica.owned.set(sessionId, drop);
  const { keys, leaseMs, idleTimeoutMs } = replica;
  const record: SessionRecord = {
    sessionId,
    owner: replica.replicaId,
    endpoint: label,
    principal: session.principal,
    protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : '',
    initialize: params,
    createdAt: Date.now(),
  };
  try {
    await replica.client
      .multi()
      .hSet(keys.session(sessionId), encodeRecord(record))
      .pExpire(keys.session(sessionId), idleTimeoutMs)
      .set(keys.owner(sessionId), replica.replicaId, { expiration: { type: 'PX', value: leaseMs } })
      .execAsPipeline();
  } catch (error) {
    // The session still works here; other replicas just cannot find it.
    replica.failed(error);
  }
}

/** The in-flight record for failover (inflight-tap.ts; a JSON answer passes through untouched). */
function tap(replica: ReplicaState, sessionId: string, body: unknown, response: Response): Response {
  const message = body as { id?: unknown; method?: unknown } | undefined;
  const id = message?.id;
  if ((typeof id !== 'string' && typeof id !== 'number') || message?.method === 'initialize' || !replica.owned.has(sessionId)) {
    return response;
  }
  const key = replica.keys.inflight(sessionId);
  const field = requestKey(id);
  return tapInflight(response, {
    recorded: async (streamId) => {
      await replica.client.multi().hSet(key, field, streamId).pExpire(key, replica.idleTimeoutMs).execAsPipeline();
    },
    // The end of a response stream is not an answer: SSE polling ends streams of calls still
    // running. The store's `answered` hook clears the record when the response is stored.
    delivered: () => undefined,
  });
}
