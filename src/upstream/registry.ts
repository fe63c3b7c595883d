/**
 * Every configured upstream server, with its primary connection (eager: it proves the server is
 * up, supplies capabilities and instructions, serves lists to sessionless clients and carries all
 * traffic for `isolation: "shared"`), for `isolation: "session"` a bounded lease pool for
 * sessionless calls, and for `isolation: "principal"` the per-principal connections
 * (principal-connections.ts). Sessions create their own links through `connect`; a stdio server's
 * `sessionChildren` bounds how many of those (child processes) live at once, gateway-wide.
 * Every connection opened here is followed by its server's `changes` (server-changes.ts).
 *
 * One server can be stopped, started, restarted, removed and added at run time (an operator's
 * global disable, or a reload): `stopServer`, `startServer`, `restart`, `removeServer`,
 * `addServer`, applied in order per server by server-lifecycle.ts.
 */
import type { ServerConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { ChildCensus } from './child-census.js';
import { POOLED_CONNECTION_CAPABILITIES, SHARED_CONNECTION_CAPABILITIES } from '../rpc/client-capabilities.js';
import { connect2025, createConnector, upstreamSessionLost, type ConnectorDeps } from './connector.js';
import type { HeldConnection } from './connection-policy.js';
import { UpstreamLink } from './link.js';
import { announceToolsChanged } from './server-restart.js';
import { ServerLifecycle } from './server-lifecycle.js';
import { createServerEntry, effectiveState, type ConnectOptions, type EffectiveState, startPrimaries, type EntrySettings, type ServerEntry } from './registry-entry.js';
import { ServerRoster } from './server-roster.js';
import type { UserTokens } from './credentials/user-tokens.js';

export type { ServerEntry } from './registry-entry.js';

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
  /** A session's stdio child or a principal connection with nothing in flight is closed after this long (`sessions.childIdleTimeoutMs`). */
  childIdleTimeoutMs: number;
  deps: ConnectorDeps;
  logger: Logger;
  /** Told when a server is stopped or removed, once its connections are closed: its upstream tokens are dropped. */
  onServerStopped?: (server: string) => void;
  /** Sessions' own tokens for `perUser` servers: a restart or removal of such a server drops them first. */
  userTokens?: UserTokens;
}

export interface ServerStatus {
  server: string;
  mode: 'required' | 'optional';
  /** As every surface reports it (registry-entry.ts `effectiveState`). */
  state: EffectiveState;
}

/** The states in which a required server counts as up for readiness. */
const UP: ReadonlySet<EffectiveState> = new Set<EffectiveState>(['ready', 'authRequired']);

export class UpstreamRegistry {
  private readonly entryMap = new Map<string, ServerEntry>();
  /** Every server this registry holds, in merge order: sorted at start, each one a reload adds last. */
  readonly roster: ServerRoster;
  private readonly addedListeners = new Set<(entry: ServerEntry) => void>();
  private readonly options: UpstreamRegistryOptions;
  private readonly logger: Logger;
  private readonly census = new ChildCensus();
  /** Which servers are stopped or removed, and the changes being applied to them (server-lifecycle.ts). */
  private readonly lifecycle: ServerLifecycle;

  /** How long a session's stdio child or a principal connection lives with nothing in flight. */
  get childIdleTimeoutMs(): number {
    return this.options.childIdleTimeoutMs;
  }

  /** Every entry, including those a reload removed (they stay, stopped) and those it added. */
  get entries(): ReadonlyMap<string, ServerEntry> {
    return this.entryMap;
  }

  constructor(options: UpstreamRegistryOptions) {
    this.options = options;
    this.logger = options.logger;
    const names = Object.keys(options.servers).sort();
    this.roster = new ServerRoster(names);
    this.lifecycle = new ServerLifecycle({
      logger: this.logger,
      roster: this.roster,
      entry: (name) => this.entry(name),
      existing: (name) => this.entryMap.get(name),
      create: (name, config) => {
        const entry = createServerEntry(name, config, this.settings);
        this.entryMap.set(name, entry);
        // Before anything of it can connect: the restart counter and the customisation list see every state.
        for (const listener of [...this.addedListeners]) listener(entry);
        return entry;
      },
      settings: () => this.settings,
      stopped: (name) => this.options.onServerStopped?.(name),
      dropUserTokens: (name) => this.options.userTokens?.dropServer(name),
    });
    // After the lifecycle: an entry's connections ask it whether their server is stopped.
    for (const name of names) this.entryMap.set(name, createServerEntry(name, options.servers[name]!, this.settings));
  }

  /** What every entry is built under (registry-entry.ts): this registry's settings, read when used. */
  private get settings(): EntrySettings {
    return { ...this.options, connect: (server, options) => this.connect(server, options) };
  }

  /**
   * Restarts one server under a new entry of the same transport and isolation: its connections
   * are replaced, the sessions stay and hear `list_changed`; a stopped server stays stopped
   * (server-lifecycle.ts). Every session's own token for it (`perUser`) is dropped first: a user
   * gave it for the upstream as it was, and the new configuration may name another URL. Queued
   * with stops and starts of the same server.
   */
  restart(name: string, config: ServerConfig): Promise<void> {
    return this.lifecycle.restart(name, config);
  }

  /** Sessions listing tools of `name` hear `tools/list_changed` (its tool filters moved). */
  announceToolsChanged(name: string): void {
    announceToolsChanged(this.entry(name));
  }


  entry(name: string): ServerEntry {
    const entry = this.entries.get(name);
    if (entry === undefined) throw new GatewayError('UNKNOWN_SERVER', `unknown server "${name}"`);
    return entry;
  }

  /**
   * A fresh connection to one server; `owner` receives what no call can be credited with.
   * `era: '2025'` (a 2025 session's own connection) speaks the 2025 revision to an upstream
   * that offers it (`connect2025`: how depends on the upstream kind).
   */
  async connect(name: string, options: ConnectOptions = {}): Promise<UpstreamLink> {
    this.lifecycle.refuseStopped(name);
    const link = await this.open(name, options);
    if (this.lifecycle.isStopped(name)) {
      // Stopped while this connection was opening: it must not outlive the stop.
      await link.close();
      this.lifecycle.refuseStopped(name);
    }
    this.entry(name).changes.track(link);
    return link;
  }

  /** True while `name` is stopped at run time (`stopServer`). */
  isStopped(name: string): boolean {
    return this.lifecycle.isStopped(name);
  }

  /**
   * Stops one server: every connection of it closes (stdio children are reaped) and none opens
   * until `startServer`; its primary's state is `closed`. Resolves once all are closed. Idempotent.
   */
  stopServer(name: string): Promise<void> {
    return this.lifecycle.stop(name);
  }

  /**
   * Starts a stopped server again: resolves once it is `starting` — its primary reconnects in
   * the background and sessions reconnect on their next use. No-op unless stopped.
   */
  startServer(name: string): Promise<void> {
    return this.lifecycle.start(name);
  }

  /**
   * Removes one server (a reload dropped it): stopped as `stopServer` stops it, and no
   * `startServer` starts it again (only `addServer`); it leaves `status()`. Its entry stays, so a
   * session or call still holding its name is refused as for any stopped server.
   */
  removeServer(name: string): Promise<void> {
    return this.lifecycle.remove(name);
  }

  /**
   * Adds one server a reload named (built as at start, registry-entry.ts) and starts its primary,
   * unless `stopped`; it joins `roster` once the primary's first attempt settled, and rejects
   * with the connect error when it did not come up (server-lifecycle.ts). `entry(name)` finds it
   * as soon as this returns, before the promise settles: the endpoints build its side channel
   * over it while it starts.
   */
  addServer(name: string, config: ServerConfig, { stopped = false }: { stopped?: boolean } = {}): Promise<void> {
    return this.lifecycle.add(name, config, stopped);
  }

  /** Called with each entry `addServer` creates, before anything of it connects; returns the unsubscribe. */
  onServerAdded(listener: (entry: ServerEntry) => void): () => void {
    this.addedListeners.add(listener);
    return () => this.addedListeners.delete(listener);
  }

  /** True once a reload removed `name`. */
  isRemoved(name: string): boolean {
    return this.lifecycle.isRemoved(name);
  }

  private async open(name: string, options: ConnectOptions): Promise<UpstreamLink> {
    const { owner, era = 'any', exclusive = false } = options;
    const clientCapabilities = options.clientCapabilities ?? (exclusive ? POOLED_CONNECTION_CAPABILITIES : SHARED_CONNECTION_CAPABILITIES);
    const config = this.entry(name).config;
    const logger = this.logger.child({ server: name });
    const open = (negotiation?: '2025') => {
      // Connectors name their server in their own log fields; only the link needs the child.
      const deps = { ...this.options.deps, census: this.census, credentialOwner: options.credentialOwner };
      const connector = createConnector(name, config, deps, this.logger);
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
    return era === '2025' ? connect2025(config, open, logger) : open();
  }

  /** True when `error` of a call to `name` means the upstream forgot the connection's session. */
  sessionLost(name: string, error: unknown): boolean {
    return upstreamSessionLost(this.entry(name).config, error);
  }

  /**
   * A connection for one sessionless call of `principal` (undefined without authentication):
   * pooled for session isolation (bounded wait, per-principal cap), the primary if shared.
   */
  async lease(name: string, principal?: string): Promise<HeldConnection> {
    const entry = this.entry(name);
    if (entry.pool !== undefined) return entry.pool.acquire(principal);
    const link = await entry.primary.get();
    return { link, release: () => undefined, drop: () => entry.primary.discard(link) };
  }

  /**
   * Connects every primary. Required servers that fail make this reject, naming them (never their
   * command or URL); optional ones are logged and keep retrying in the background.
   */
  async start(): Promise<void> {
    // Disabled before start: not started.
    await startPrimaries([...this.entries.values()].filter((entry) => !this.lifecycle.isStopped(entry.name)), this.logger);
  }

  /**
   * A registry of other servers under this one's settings and connector deps: the servers one
   * session brings (routing/scopes/session-servers-scope.ts). Its children are counted apart from this
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
    return [...this.entries.values()].filter((e) => !this.lifecycle.isRemoved(e.name)).map((e) => ({ server: e.name, mode: e.config.mode, state: effectiveState(e) }));
  }

  /**
   * True when every required server is up as `status()` reports it (a server stopped on purpose is
   * not waited for; one with no primary is `ready`; a per-user server is up when it answers its
   * token-less primary by asking for authorization, which it does until a user's token reaches it).
   */
  ready(): boolean {
    return [...this.entries.values()].every(
      (e) => e.config.mode === 'optional' || this.lifecycle.isStopped(e.name) || UP.has(effectiveState(e)),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].flatMap((e) => [e.primary.close(), e.pool?.close(), e.principals?.close()]));
  }
}
