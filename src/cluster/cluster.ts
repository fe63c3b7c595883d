/**
 * One gateway replica's membership of a cluster sharing the redis store (docs/deployment.md,
 * "Scaling out with Docker Compose"): how this gateway shares its sessions (session-hooks.ts).
 * It keeps the directory connection, renews every lease this replica holds with one heartbeat,
 * hands them back on close, and gives each endpoint its hooks (endpoint-hooks.ts: forward, take
 * over, record).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { GatewayEventStore, SessionEventStore } from '../session/event-store.js';
import type { SessionHooks, SessionSharing } from '../session/session-hooks.js';
import { clusterEventStore } from './cluster-event-store.js';
import type { ClusterKeys } from './cluster-keys.js';
import { createClusterRedis } from './cluster-redis.js';
import { redisBuckets } from './redis-buckets.js';
import { redisLoadedNames } from './redis-loaded-names.js';
import type { LoadedNamesStore } from '../naming/loaded-names.js';
import { bindingOf, PROOF_HEADER, proofVerifier, type ProofVerdict } from './principal-proof.js';
import type { BucketStore } from '../policy/request-limits.js';
import { HOP_HEADER } from './forward.js';
import { requestKey } from '../session/jsonrpc-id.js';
import { endpointHooks, type ReplicaState } from './endpoint-hooks.js';
import type { ForwardOptions } from './forward.js';
import { peerForwarding } from './peer-forwarding.js';
import { Leases } from './leases.js';
import { closeRedis } from '../session/redis-close.js';
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

/** How long `start()` waits for Redis before serving anyway. */
const START_WAIT_MS = 3_000;

export class Cluster implements SessionSharing {
  readonly replicaId: string;
  private readonly options: ClusterOptions;
  private readonly client;
  private readonly leases: Leases;
  private readonly owned = new Map<string, () => void>();
  private readonly prepared = new Map<string, SessionEventStore>();
  private readonly replaying = new Set<string>();
  private readonly adopting = new Map<string, Promise<unknown>>();
  private advertiseUrl: string | undefined;
  private innerStore: GatewayEventStore | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The directory connection's first attempt (`start`); undefined before. */
  private connecting: Promise<unknown> | undefined;
  private draining = false;
  private healthy = true;
  private readonly forwarding: ForwardOptions & { close(): Promise<void> };
  private readonly state: ReplicaState;
  private readonly verifyProof: ReturnType<typeof proofVerifier> | undefined;

  /**
   * The principal a request forwarded by a peer replica carries (its proof checked), or undefined
   * when the request does not claim to be forwarded. Without a cluster secret no proof can be
   * valid: a forwarded request then cannot act for an authenticated principal.
   */
  forwardedPrincipal(request: Request): ProofVerdict | undefined {
    if (!request.headers.has(HOP_HEADER)) return undefined;
    const proof = request.headers.get(PROOF_HEADER);
    const binding = bindingOf(request);
    if (this.verifyProof === undefined) return { ok: false, reason: 'no cluster secret configured' };
    if (proof === null || binding === undefined) return { ok: false, reason: 'forwarded request without a principal proof' };
    return this.verifyProof(proof, binding);
  }

  /** Rate-limit buckets every replica shares (policy `rateLimits`), on this replica's connection. */
  rateBuckets(): BucketStore {
    return redisBuckets(this.client, this.options.keys, this.options.logger);
  }

  /** The tools 2026-era callers loaded, shared by every replica, on this replica's connection. */
  loadedNames(): LoadedNamesStore {
    return redisLoadedNames(this.client, this.options.keys, this.options.logger);
  }

  /** Opens nothing: the directory connection is opened by `start`. */
  constructor(options: ClusterOptions) {
    this.options = options;
    this.replicaId = options.replicaId ?? randomUUID();
    this.client = createClusterRedis(options.redisUrl, options.redisAllowPrivateNetwork, options.logger);
    this.forwarding = peerForwarding(this.replicaId, options);
    this.verifyProof = options.secret === undefined ? undefined : proofVerifier(options.secret);
    this.client.on('error', (error: unknown) => this.failed(error));
    this.client.on('ready', () => this.recovered());
    this.leases = new Leases({
      client: this.client,
      keys: options.keys,
      replicaId: this.replicaId,
      leaseMs: options.leaseMs,
      recordTtlMs: options.idleTimeoutMs,
    });
    this.state = {
      replicaId: this.replicaId,
      keys: options.keys,
      leaseMs: options.leaseMs,
      idleTimeoutMs: options.idleTimeoutMs,
      secret: options.secret,
      logger: options.logger,
      client: this.client,
      leases: this.leases,
      forwarding: this.forwarding,
      owned: this.owned,
      prepared: this.prepared,
      replaying: this.replaying,
      adopting: this.adopting,
      innerStore: () => this.innerStoreOf(),
      failed: (error) => this.failed(error),
    };
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

  /**
   * Connects to the directory, announces this replica and starts the heartbeat; `boundUrl` is
   * used when no advertiseUrl is configured. Redis not answering within 3 s does not stop it:
   * the client reconnects on its own and the heartbeat announces the replica then.
   */
  async start(boundUrl: string): Promise<void> {
    this.advertiseUrl = this.options.advertiseUrl ?? boundUrl;
    this.connecting ??= this.client.connect().catch(() => undefined);
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

  forEndpoint(label: string): SessionHooks {
    return endpointHooks(label, this.state);
  }

  /** Stops the heartbeat and hands every owned session's lease back (sessions are closed by their endpoints). */
  async close(): Promise<void> {
    this.draining = true;
    clearInterval(this.heartbeat);
    const ids = [...this.owned.keys()];
    this.owned.clear();
    if (this.client.isReady) await this.leases.release(ids).catch(() => undefined);
    await closeRedis(this.client, this.connecting);
    await this.forwarding.close();
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
