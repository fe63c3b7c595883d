/**
 * One gateway replica's membership of a cluster sharing the redis store (docs/deployment.md,
 * "Scaling out with Docker Compose"). The endpoint asks it, before its local lookup fails a session
 * id, where the session lives: another live replica (forward the request there, SSE streamed back),
 * nobody (the owner's lease expired: claim it and take the session over), or nowhere (404). It also
 * writes the session record on initialize, records in-flight requests for failover, and renews
 * every lease this replica holds with one heartbeat.
 */
import { randomUUID } from 'node:crypto';
import { errorResponse, GatewayError, refusal } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { GatewayEventStore, SessionEventStore } from '../session/event-store.js';
import { clusterEventStore } from './cluster-event-store.js';
import type { ClusterKeys } from './cluster-keys.js';
import { createClusterRedis } from './cluster-redis.js';
import { redisBuckets } from './redis-buckets.js';
import { mintProof, PROOF_HEADER, proofVerifier, type ProofVerdict } from './principal-proof.js';
import type { BucketStore } from '../policy/request-limits.js';
import { requestKey } from '../session/jsonrpc-id.js';
import { checkForwarded, forwardRequest, HOP_HEADER, type ForwardOptions } from './forward.js';
import { peerForwarding } from './peer-forwarding.js';
import { tapInflight } from './inflight-tap.js';
import { Leases } from './leases.js';
import type { RebuildableSession } from './replay-initialize.js';
import { decodeRecord, encodeRecord, initializeParamsOf, type SessionRecord } from './session-record.js';
import { takeOver } from './takeover.js';
import { sessionTag } from '../observability/session-tag.js';

export interface ClusterOptions {
  replicaId?: string | undefined;
  advertiseUrl?: string | undefined;
  leaseMs: number;
  /** The shared Redis (`eventStore.url`); never logged. */
  redisUrl: string;
  /** `eventStore.allowPrivateNetwork`. */
  redisAllowPrivateNetwork: boolean;
  /** Peers this replica forwards to: `cluster.allowPrivateNetwork` and the policy's verdict on a peer URL. */
  peers: {
    allowPrivateNetwork: boolean;
    allowed(url: string): { ok: true } | { ok: false; message: string };
  };
  keys: ClusterKeys;
  /** Session records and in-flight hashes live this long past the owner's last heartbeat. */
  idleTimeoutMs: number;
  /** `PORTCULLIS_CLUSTER_SECRET`: required on forwarded requests when set. */
  secret: string | undefined;
  logger: Logger;
}

/** A session as the endpoint holds it. */
export type ClusterSession = RebuildableSession & { close(): Promise<void> };

/** What one endpoint (`aggregate`, `servers/<name>`) asks of the cluster. */
export interface EndpointCluster {
  /** 403 for a request posing as forwarded without the cluster secret; undefined otherwise. */
  refuseForged(request: Request): Response | undefined;
  /** For a session id not held here: the owner's answer (forwarded), a 404/503, or the session taken over. */
  route<S extends ClusterSession>(args: RouteArgs<S>): Promise<Response | S>;
  /** A session was initialised here: record it and take its lease (before the client learns the id). */
  opened(sessionId: string, principal: string | undefined, initializeBody: unknown, drop: () => void): Promise<void>;
  /** `response` to request `body` of `sessionId`, watched for the in-flight record. */
  tap(sessionId: string, body: unknown, response: Response): Response;
}

export interface RouteArgs<S> {
  request: Request;
  sessionId: string;
  principal: string | undefined;
  parsedBody: unknown;
  /** Builds and starts a session with this principal and id (used by a takeover). */
  open(principal: string | undefined, sessionId: string): Promise<S>;
  /** Closes the session here without touching its shared state (its lease was lost). */
  drop(sessionId: string): void;
}

/** How long `start()` waits for Redis before serving anyway. */
const START_WAIT_MS = 3_000;

const notFound = () => refusal('SESSION_NOT_FOUND', 'Session not found');
const retryLater = (why: string) => refusal('CLUSTER_UNAVAILABLE', `${why}; retry`);

export class Cluster {
  readonly replicaId: string;
  private readonly options: ClusterOptions;
  private readonly client;
  private readonly leases: Leases;
  /** Sessions this replica owns → how to let go of one locally. */
  private readonly owned = new Map<string, () => void>();
  private readonly prepared = new Map<string, SessionEventStore>();
  private readonly replaying = new Set<string>();
  private readonly adopting = new Map<string, Promise<unknown>>();
  private advertiseUrl: string | undefined;
  private innerStore: GatewayEventStore | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private draining = false;
  private healthy = true;
  private readonly forwarding: ForwardOptions & { close(): Promise<void> };
  private readonly verifyProof: ReturnType<typeof proofVerifier> | undefined;

  /**
   * The principal a request forwarded by a peer replica carries (its proof checked), or undefined
   * when the request does not claim to be forwarded. Without a cluster secret no proof can be
   * valid: a forwarded request then cannot act for an authenticated principal.
   */
  forwardedPrincipal(request: Request): ProofVerdict | undefined {
    if (!request.headers.has(HOP_HEADER)) return undefined;
    const proof = request.headers.get(PROOF_HEADER);
    const sessionId = request.headers.get('mcp-session-id');
    if (this.verifyProof === undefined) return { ok: false, reason: 'no cluster secret configured' };
    if (proof === null || sessionId === null) return { ok: false, reason: 'forwarded request without a principal proof' };
    return this.verifyProof(proof, { sessionId, method: request.method, path: new URL(request.url).pathname });
  }

  /** Rate-limit buckets every replica shares (policy `rateLimits`), on this replica's connection. */
  rateBuckets(): BucketStore {
    return redisBuckets(this.client, this.options.keys, this.options.logger);
  }

  constructor(options: ClusterOptions) {
    this.options = options;
    this.replicaId = options.replicaId ?? randomUUID();
    this.client = createClusterRedis(options.redisUrl, options.redisAllowPrivateNetwork, options.logger);
    this.forwarding = peerForwarding(this.replicaId, options);
    this.verifyProof = options.secret === undefined ? undefined : proofVerifier(options.secret);
    this.client.on('error', (error: unknown) => this.failed(error));
    this.client.on('ready', () => this.recovered());
    void this.client.connect().catch(() => undefined);
    this.leases = new Leases({
      client: this.client,
      keys: options.keys,
      replicaId: this.replicaId,
      leaseMs: options.leaseMs,
      recordTtlMs: options.idleTimeoutMs,
    });
  }

  /** The store sessions should use: `inner` with takeover, in-flight and ownership hooks. */
  wrapStore(inner: GatewayEventStore): GatewayEventStore {
    const { client, options } = this;
    this.innerStore = inner;
    return clusterEventStore(inner, {
      takePrepared: (id) => {
        const view = this.prepared.get(id);
        this.prepared.delete(id);
        return view;
      },
      replaying: (id) => this.replaying.has(id),
      answered: (id, requestId) => {
        if (this.owned.has(id)) client.hDel(options.keys.inflight(id), requestKey(requestId)).catch(() => undefined);
      },
      closed: async (id) => {
        if (this.draining || !this.owned.delete(id)) return false;
        const { keys } = options;
        await client.del([keys.session(id), keys.owner(id), keys.inflight(id)]).catch((error: unknown) => this.failed(error));
        return true;
      },
    });
  }

  /** Announces this replica and starts the heartbeat; `boundUrl` is used when no advertiseUrl is configured. */
  async start(boundUrl: string): Promise<void> {
    this.advertiseUrl = this.options.advertiseUrl ?? boundUrl;
    if (!this.client.isReady) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, START_WAIT_MS);
        this.client.once('ready', () => (clearTimeout(timer), resolve()));
      });
    }
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat(), Math.max(100, Math.floor(this.options.leaseMs / 3)));
    this.heartbeat.unref();
    this.options.logger.info({ replica: this.replicaId }, 'cluster replica started');
  }

  forEndpoint(label: string): EndpointCluster {
    return {
      refuseForged: (request) => {
        const check = checkForwarded(request.headers, this.options.secret);
        return check.ok ? undefined : refusal('FORWARD_REFUSED', check.message);
      },
      route: (args) => this.route(label, args),
      opened: (sessionId, principal, body, drop) => this.opened(label, sessionId, principal, body, drop),
      tap: (sessionId, body, response) => this.tap(sessionId, body, response),
    };
  }

  /** Stops the heartbeat and hands every owned session's lease back (sessions are closed by their endpoints). */
  async close(): Promise<void> {
    this.draining = true;
    clearInterval(this.heartbeat);
    const ids = [...this.owned.keys()];
    this.owned.clear();
    if (this.client.isReady) {
      await this.leases.release(ids).catch(() => undefined);
      await this.client.close().catch(() => this.client.destroy());
    } else if (this.client.isOpen) this.client.destroy();
    await this.forwarding.close();
  }

  private async route<S extends ClusterSession>(label: string, args: RouteArgs<S>): Promise<Response | S> {
    const { request, sessionId, principal } = args;
    const { keys } = this.options;
    try {
      const record = decodeRecord(sessionId, await this.client.hGetAll(keys.session(sessionId)));
      // Another principal, or a session of another endpoint, learns nothing: exactly like an unknown id.
      if (record === undefined || record.endpoint !== label || record.principal !== principal) return notFound();
      const forwarded = request.headers.has(HOP_HEADER);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const owner = await this.leases.ownerOf(sessionId);
        if (owner === this.replicaId || (owner === null && (await this.leases.claim(sessionId)))) {
          return await this.adoptOnce(record, args);
        }
        if (owner === null) continue; // another replica claimed it first: look again
        if (forwarded) return retryLater('the session is moving between replicas');
        const url = await this.leases.urlOf(owner);
        if (url === null) return retryLater('the replica owning this session is not reachable');
        const secret = this.options.secret;
        const proof = secret === undefined ? undefined : mintProof(secret, principal, { sessionId, method: request.method, path: new URL(request.url).pathname });
        return await forwardRequest(request, args.parsedBody, url, this.forwarding, proof);
      }
      return retryLater('the session is moving between replicas');
    } catch (error) {
      // Only Redis trouble marks the directory unhealthy; a full session budget is just busy.
      if (error instanceof GatewayError && (error.code === 'SESSION_LIMIT' || error.code === 'PRINCIPAL_SESSION_LIMIT')) return errorResponse(error);
      this.failed(error);
      return retryLater('the session directory is unavailable');
    }
  }

  private adoptOnce<S extends ClusterSession>(record: SessionRecord, args: RouteArgs<S>): Promise<Response | S> {
    const { sessionId } = record;
    let adopting = this.adopting.get(sessionId) as Promise<Response | S> | undefined;
    if (adopting === undefined) {
      adopting = this.adopt(record, args).finally(() => this.adopting.delete(sessionId));
      this.adopting.set(sessionId, adopting);
    }
    return adopting;
  }

  private async adopt<S extends ClusterSession>(record: SessionRecord, args: RouteArgs<S>): Promise<Response | S> {
    const { client, options } = this;
    const deps = {
      client,
      keys: options.keys,
      store: this.innerStoreOf(),
      logger: options.logger,
      prepare: (id: string, view: SessionEventStore) => {
        this.prepared.set(id, view);
        this.replaying.add(id);
        return () => {
          this.prepared.delete(id);
          this.replaying.delete(id);
        };
      },
    };
    // Renewed from the moment it is claimed: a takeover can take as long as a lease.
    this.owned.set(record.sessionId, () => args.drop(record.sessionId));
    let session: S | undefined;
    try {
      session = await takeOver(deps, record, args.open);
    } finally {
      if (session === undefined) this.owned.delete(record.sessionId);
    }
    if (session === undefined) {
      // The replayed initialize may have registered the session before the handshake failed.
      args.drop(record.sessionId);
      return retryLater('the session could not be rebuilt');
    }
    await client.hSet(options.keys.session(record.sessionId), 'owner', this.replicaId);
    return session;
  }

  private async opened(label: string, sessionId: string, principal: string | undefined, body: unknown, drop: () => void): Promise<void> {
    const params = initializeParamsOf(body);
    if (params === undefined) return;
    this.owned.set(sessionId, drop);
    const { keys, leaseMs, idleTimeoutMs } = this.options;
    const record: SessionRecord = {
      sessionId,
      owner: this.replicaId,
      endpoint: label,
      principal,
      protocolVersion: typeof params.protocolVersion === 'string' ? params.protocolVersion : '',
      initialize: params,
      createdAt: Date.now(),
    };
    try {
      await this.client
        .multi()
        .hSet(keys.session(sessionId), encodeRecord(record))
        .pExpire(keys.session(sessionId), idleTimeoutMs)
        .set(keys.owner(sessionId), this.replicaId, { expiration: { type: 'PX', value: leaseMs } })
        .execAsPipeline();
    } catch (error) {
      // The session still works here; other replicas just cannot find it.
      this.failed(error);
    }
  }

  private tap(sessionId: string, body: unknown, response: Response): Response {
    const message = body as { id?: unknown; method?: unknown } | undefined;
    const id = message?.id;
    if ((typeof id !== 'string' && typeof id !== 'number') || message?.method === 'initialize' || !this.owned.has(sessionId)) {
      return response;
    }
    const key = this.options.keys.inflight(sessionId);
    const field = requestKey(id);
    return tapInflight(response, {
      recorded: async (streamId) => {
        await this.client.multi().hSet(key, field, streamId).pExpire(key, this.options.idleTimeoutMs).execAsPipeline();
      },
      // The end of a response stream is not an answer: SSE polling ends streams of calls still
      // running. The store's `answered` hook clears the record when the response is stored.
      delivered: () => undefined,
    });
  }

  private async beat(): Promise<void> {
    if (this.draining || this.advertiseUrl === undefined || !this.client.isReady) return;
    const ids = [...this.owned.keys()];
    try {
      const lost = await this.leases.renew(this.advertiseUrl, ids);
      for (const id of lost) {
        const drop = this.owned.get(id);
        if (drop === undefined) continue;
        this.owned.delete(id);
        this.options.logger.warn({ session: sessionTag(id) }, 'session lease lost to another replica; closing it here');
        drop();
      }
    } catch (error) {
      this.failed(error);
    }
  }

  private innerStoreOf(): GatewayEventStore {
    if (this.innerStore === undefined) throw new Error('cluster store not wired');
    return this.innerStore;
  }

  private failed(error: unknown): void {
    if (!this.healthy) return;
    this.healthy = false;
    const code = (error as { code?: unknown } | undefined)?.code;
    this.options.logger.warn({ err: typeof code === 'string' ? code : (error as Error | undefined)?.name }, 'cluster redis unavailable');
  }

  private recovered(): void {
    if (this.healthy) return;
    this.healthy = true;
    this.options.logger.info('cluster redis reachable again');
  }
}
