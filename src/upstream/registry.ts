/**
 * Every configured upstream server, with its primary connection (eager: it proves the server is
 * up, supplies capabilities and instructions, serves lists to sessionless clients and carries all
 * traffic for `isolation: "shared"`), for `isolation: "session"` a bounded lease pool for
 * sessionless calls, and for `isolation: "principal"` the per-principal connections
 * (principal-connections.ts). Sessions create their own links through `connect`; a stdio server's
 * `sessionChildren` bounds how many of those (child processes) live at once, gateway-wide.
 * Every connection opened here is followed by its server's `changes` (server-changes.ts).
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { ChildQuota } from './child-quota.js';
import { ChildCensus } from './child-census.js';
import { POOLED_CONNECTION_CAPABILITIES, SHARED_CONNECTION_CAPABILITIES } from '../rpc/client-capabilities.js';
import { connectLegacyEra, createConnector, upstreamSessionLost, type ConnectorDeps } from './connector.js';
import { LeasePool, type Lease } from './lease-pool.js';
import { UpstreamLink } from './link.js';
import { PrincipalConnections, type ConnectionKey } from './principal-connections.js';
import { ServerChanges } from './server-changes.js';
import type { DownstreamSink } from '../rpc/sink.js';
import { UpstreamSlot, type SlotState } from './slot.js';

export interface UpstreamRegistryOptions {
  /** Told each time a call waits for a free stateless-pool connection of a server (metrics). */
  onLeaseWait?: (server: string) => void;
  servers: Readonly<Record<string, ServerConfig>>;
  statelessPool: {
    maxPerServer: number;
    idleTimeoutMs: number;
    maxWaitMs: number;
    /** Absent: half the pool, at least 1. */
    maxPerPrincipal?: number;
    cancelGraceMs: number;
  };
  /** Sessions' own children one stdio server may have alive at once (`sessions.maxChildrenPerServer`); also the principal connections of a server. */
  maxSessionChildren: number;
  /** A principal connection with nothing in flight is closed after this long (`sessions.childIdleTimeoutMs`). */
  principalIdleTimeoutMs: number;
  deps: ConnectorDeps;
  logger: Logger;
}

export interface ServerEntry {
  readonly name: string;
  readonly config: ServerConfig;
  readonly primary: UpstreamSlot;
  readonly pool: LeasePool | undefined;
  /** Places for sessions' own child processes (stdio, `isolation: "session"`); undefined otherwise. */
  readonly sessionChildren: ChildQuota | undefined;
  /** One connection per principal and workspace (`isolation: "principal"`); undefined otherwise. */
  readonly principals: PrincipalConnections | undefined;
  /** List changes heard on any connection of the server. */
  readonly changes: ServerChanges;
}

export interface ConnectOptions {
  /** Receives what no call can be credited with (a 2025 session's standalone stream). */
  owner?: DownstreamSink;
  /** `legacy`: prefer the 2025 revision (a 2025 session's own connection). */
  era?: 'legacy' | 'any';
  /**
   * What arrives while one call's request is the only one open is that call's: a pooled lease
   * (one call at a time), or a principal's own connection (every call on it is that principal's).
   */
  exclusive?: boolean;
  /**
   * The capabilities to declare: a session's own connection passes its client's. Absent: what
   * the gateway can honour on a connection no client owns (pooled or shared; client-capabilities.ts).
   */
  clientCapabilities?: ClientCapabilities;
}

export interface ServerStatus {
  server: string;
  mode: 'required' | 'optional';
  state: SlotState;
}

export class UpstreamRegistry {
  readonly entries: ReadonlyMap<string, ServerEntry>;
  private readonly options: UpstreamRegistryOptions;
  private readonly logger: Logger;
  private readonly census = new ChildCensus();

  constructor(options: UpstreamRegistryOptions) {
    this.options = options;
    this.logger = options.logger;
    const entries = new Map<string, ServerEntry>();
    const settings = options.statelessPool;
    for (const name of Object.keys(options.servers).sort()) {
      const config = options.servers[name]!;
      const primary = new UpstreamSlot({
        server: name,
        eager: true,
        logger: this.logger,
        connect: () => this.connect(name),
      });
      const pool =
        config.isolation === 'session'
          ? new LeasePool({
              server: name,
              max: settings.maxPerServer,
              idleTimeoutMs: settings.idleTimeoutMs,
              maxWaitMs: settings.maxWaitMs,
              maxPerPrincipal: settings.maxPerPrincipal ?? Math.max(1, Math.ceil(settings.maxPerServer / 2)),
              cancelGraceMs: settings.cancelGraceMs,
              logger: this.logger,
              ...(options.onLeaseWait === undefined ? {} : { onWait: () => options.onLeaseWait?.(name) }),
              createSlot: () =>
                new UpstreamSlot({ server: name, logger: this.logger, connect: () => this.connect(name, { exclusive: true }) }),
            })
          : undefined;
      const sessionChildren =
        config.isolation === 'session' && config.transport === 'stdio' ? new ChildQuota(name, options.maxSessionChildren, this.logger) : undefined;
      const principals =
        config.isolation === 'principal'
          ? new PrincipalConnections({
              server: name,
              max: options.maxSessionChildren,
              maxPerPrincipal: Math.max(1, Math.ceil(options.maxSessionChildren / 2)),
              idleTimeoutMs: options.principalIdleTimeoutMs,
              // The 2025 revision where offered: 2025 sessions share it (subscriptions, log levels).
              connect: () => this.connect(name, { era: 'legacy', exclusive: true }),
              logger: this.logger,
            })
          : undefined;
      entries.set(name, { name, config, primary, pool, sessionChildren, principals, changes: new ServerChanges() });
    }
    this.entries = entries;
  }

  entry(name: string): ServerEntry {
    const entry = this.entries.get(name);
    if (entry === undefined) throw new GatewayError('UNKNOWN_SERVER', `unknown server "${name}"`);
    return entry;
  }

  /**
   * A fresh connection to one server; `owner` receives what no call can be credited with.
   * `era: 'legacy'` (a 2025 session's own connection) speaks the 2025 revision to an upstream
   * that offers it (`connectLegacyEra`: how depends on the upstream kind).
   */
  async connect(name: string, options: ConnectOptions = {}): Promise<UpstreamLink> {
    const link = await this.open(name, options);
    this.entry(name).changes.track(link);
    return link;
  }

  private async open(name: string, options: ConnectOptions): Promise<UpstreamLink> {
    const { owner, era = 'any', exclusive = false } = options;
    const clientCapabilities = options.clientCapabilities ?? (exclusive ? POOLED_CONNECTION_CAPABILITIES : SHARED_CONNECTION_CAPABILITIES);
    const config = this.entry(name).config;
    const logger = this.logger.child({ server: name });
    const open = (negotiation?: 'legacy') => {
      // Connectors name their server in their own log fields; only the link needs the child.
      const connector = createConnector(name, config, { ...this.options.deps, census: this.census }, this.logger);
      return UpstreamLink.connect({
        server: name,
        transport: connector.transport,
        negotiation: negotiation ?? connector.negotiation,
        requestTimeoutMs: config.requestTimeoutMs,
        logger,
        owner,
        exclusive,
        clientCapabilities,
      });
    };
    return era === 'legacy' ? connectLegacyEra(config, open, logger) : open();
  }

  /** True when `error` of a call to `name` means the upstream forgot the connection's session. */
  sessionLost(name: string, error: unknown): boolean {
    return upstreamSessionLost(this.entry(name).config, error);
  }

  /**
   * A connection for one sessionless call of `principal` (undefined without authentication):
   * pooled for session isolation (bounded wait, per-principal cap), the primary if shared.
   */
  async lease(name: string, principal?: string): Promise<Lease> {
    const entry = this.entry(name);
    if (entry.pool !== undefined) return entry.pool.acquire(principal);
    const link = await entry.primary.get();
    return { link, release: () => undefined, discard: () => entry.primary.discard(link) };
  }

  /** The connection of `key` to an `isolation: "principal"` server, for one call. */
  principalLease(name: string, key: ConnectionKey): Promise<Lease> {
    const principals = this.entry(name).principals;
    if (principals === undefined) throw new GatewayError('UNKNOWN_SERVER', `server "${name}" is not isolated per principal`);
    return principals.acquire(key).then((hold) => ({ link: hold.link, release: () => hold.release(), discard: () => hold.drop(hold.link) }));
  }

  /**
   * Connects every primary. Required servers that fail make this reject, naming them (never their
   * command or URL); optional ones are logged and keep retrying in the background.
   */
  async start(): Promise<void> {
    const results = await Promise.all(
      [...this.entries.values()].map(async (entry) => {
        try {
          await entry.primary.get();
          this.logger.info({ server: entry.name }, 'upstream ready');
          return undefined;
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          if (entry.config.mode === 'optional') {
            this.logger.warn({ server: entry.name, reason }, 'optional upstream failed to start; retrying in the background');
            return undefined;
          }
          return `${entry.name}: ${reason}`;
        }
      }),
    );
    const failed = results.filter((r): r is string => r !== undefined);
    if (failed.length > 0) {
      throw new GatewayError('UPSTREAM_START_FAILED', `required upstream servers failed to start:\n  - ${failed.join('\n  - ')}`);
    }
  }

  /**
   * A registry of other servers under this one's settings and connector deps: the servers one
   * session brings (routing/session-servers-scope.ts). Its children are counted apart from this
   * registry's; closing it reaps them.
   */
  sibling(servers: Readonly<Record<string, ServerConfig>>): UpstreamRegistry {
    return new UpstreamRegistry({ ...this.options, servers });
  }

  /** Live stdio children of this registry, by server. */
  stdioChildren(): ReadonlyMap<string, number> {
    return this.census.snapshot();
  }

  status(): ServerStatus[] {
    return [...this.entries.values()].map((e) => ({ server: e.name, mode: e.config.mode, state: e.primary.state }));
  }

  /** True when every required server's primary connection is up. */
  ready(): boolean {
    return [...this.entries.values()].every((e) => e.config.mode === 'optional' || e.primary.state === 'ready');
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].flatMap((e) => [e.primary.close(), e.pool?.close(), e.principals?.close()]));
  }
}
