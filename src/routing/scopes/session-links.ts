/**
 * A 2025 session's side of the connection policy (upstream/connection-policy.ts decides which
 * connection serves each call; `SessionScope` in scopes.ts routes through this): the session's
 * own connections (session-connection.ts) to the servers the policy gives it one of, opened on
 * first use and closed with the session; its own credentials for `perUser` servers
 * (session-credentials.ts); and which connection's events reach the session:
 * - a server with connections per session: its own once open, until then the primary's list
 *   changes (its lists come from the primary meanwhile);
 * - a server with connections per principal: its principal's 2025-era one (shared with that
 *   principal's other sessions), until it is open the primary's list changes;
 * - a shared server: the primary's.
 * Which of them is the server's policy's to say (`ConnectionPolicy.follow`, `principalLink`,
 * `noteSubscription`); this class holds the session's own connections only. The session attaches
 * each server it starts with and each one a reload adds (`attach`).
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from '../../observability/logger.js';
import type { DownstreamSink, RpcMessage } from '../../rpc/sink.js';
import type { LinkEvent } from '../../upstream/link.js';
import type { UpstreamLink } from '../../upstream/link.js';
import type { ConnectionKey } from '../../upstream/principal-connections.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { UserTokens } from '../../upstream/credentials/user-tokens.js';
import type { Caller } from '../../upstream/connection-policy.js';
import { SessionConnection } from './session-connection.js';
import { SessionCredentials } from './session-credentials.js';

export interface SessionLinksOptions {
  readonly registry: UpstreamRegistry;
  /** The session's principal and workspace: its key on principal servers. */
  readonly key: ConnectionKey;
  /** The session's standalone stream: what no call can be credited with goes there. */
  readonly owner: DownstreamSink;
  /** What the session's client declared in `initialize`: its own connections declare exactly that. */
  readonly clientCapabilities: () => ClientCapabilities | undefined;
  /** The session's id: the credential owner of its own connections (never shown or stored). */
  readonly sessionId: string | undefined;
  /** Sessions' own tokens for `perUser` servers; absent: those servers get none. */
  readonly userTokens: UserTokens | undefined;
  /** Whether the session sees `server` now (its enablement, its latest token's access rules): a token for a hidden one is refused. */
  readonly visible: (server: string) => boolean;
  readonly logger: Logger;
  /** An event of the connection a server's lists come from: its list changes and resource updates. */
  readonly onEvent: (server: string, event: LinkEvent) => void;
}

export class SessionLinks {
  private readonly options: SessionLinksOptions;
  private readonly registry: UpstreamRegistry;
  private readonly key: ConnectionKey;
  private readonly own = new Map<string, SessionConnection>();
  /** The session's own connections to its per-user servers (session-credentials.ts). */
  private readonly perUser = new Map<string, SessionConnection>();
  private readonly principalServers = new Set<string>();
  private readonly unsubscribes: Array<() => void> = [];
  /** Its own tokens for `perUser` servers; undefined when it reaches none. */
  private readonly credentials: SessionCredentials | undefined;

  /** Attaches each of `servers` (the endpoint's, when the session opens). */
  constructor(options: SessionLinksOptions, servers: readonly string[]) {
    this.options = options;
    this.registry = options.registry;
    this.key = options.key;
    for (const server of servers) this.attach(server);
    this.credentials = SessionCredentials.attach(options.userTokens, {
      sessionId: options.sessionId,
      principal: this.key.principal,
      connections: this.perUser,
      owner: options.owner,
      logger: options.logger,
      visible: options.visible,
    });
  }

  /** False while every server is `shared`: the session's lists are then what any caller's are. */
  get hasOwnConnections(): boolean {
    return this.own.size > 0 || this.principalServers.size > 0;
  }

  /** True when the session's lists of `server` are its own or its principal's, never another caller's. */
  perCaller(server: string): boolean {
    return this.principalServers.has(server) || this.credentials?.covers(server) === true;
  }

  /** The connection this session's lists of `server` come from, as the server's policy says. */
  async listLink(server: string): Promise<UpstreamLink> {
    // A per-user server lists from the session's own connection only, with the session's token.
    if (this.credentials?.covers(server) === true) return this.credentials.listLink(server);
    return this.registry.entry(server).policy.listLink(this.caller(server));
  }

  /** Runs `fn` on the connection the server's policy gives this session, held for the call. */
  withLink<T>(server: string, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    const policy = this.registry.entry(server).policy;
    // A per-user server's own connection carries the session's token: refused without one.
    if (this.credentials?.covers(server) === true) {
      const own = this.own.get(server)!;
      return this.credentials.run(server, (acquire) => policy.run({ ...this.caller(server), own: { current: own.current, acquire } }, fn));
    }
    return policy.run(this.caller(server), fn);
  }

  /** This session as the policy of `server` sees it. */
  private caller(server: string): Caller {
    return { era: '2025', key: this.key, own: this.own.get(server) };
  }

  /** Keeps the session's own connection to `server` open while `link` (it) holds a task; undefined: not its own. */
  pin(server: string, link: UpstreamLink): (() => void) | undefined {
    return this.own.get(server)?.pin(link);
  }

  /** A subscription of the session's to a resource of `server` began or ended: the connection serving it counts it. */
  noteSubscription(server: string, subscribed: boolean): void {
    this.own.get(server)?.noteSubscription(subscribed);
    this.registry.entry(server).policy.noteSubscription(this.caller(server), subscribed);
  }

  /** The principal connection outlives the session: a subscription it held there ends with it. */
  releaseSubscription(server: string): void {
    this.registry.entry(server).policy.noteSubscription(this.caller(server), false);
  }

  /**
   * `logging/setLevel` for `server`: the session's own connection gets it now if open, and when
   * it opens later (a level is no reason to spawn a child); `shared` servers get it on the primary.
   */
  setLogLevel(server: string, params: Record<string, unknown>, sink: DownstreamSink): Promise<void> {
    const own = this.own.get(server);
    if (own !== undefined) return own.setLogLevel(params);
    if (this.principalServers.has(server)) {
      // A principal connection is shared by the principal's sessions: set on it only while open.
      const principal = this.principalLink(server);
      return principal !== undefined && principal.capabilities.logging !== undefined
        ? principal.request('logging/setLevel', params, { sink }).then(() => undefined)
        : Promise.resolve();
    }
    return this.withLink(server, async (link) => {
      if (link.capabilities.logging !== undefined) await link.request('logging/setLevel', params, { sink });
    });
  }

  /** Client notifications go to the session's own live connections only, never to shared ones. */
  broadcast(message: RpcMessage): void {
    for (const connection of this.own.values()) void connection.current?.notify(message).catch(() => undefined);
  }

  /**
   * Follows one server of the endpoint: its list changes and updates reach this session through
   * the connection its lists come from, as the server's policy says (`ConnectionPolicy.follow`);
   * a server with connections per session gets the session's own, opened on first use.
   */
  attach(server: string): void {
    const { onEvent } = this.options;
    const entry = this.registry.entry(server);
    const policy = entry.policy;
    if (policy.route({ era: '2025' }) === 'principal') this.principalServers.add(server);
    const connection = policy.ownPerSession ? this.openOwn(server) : undefined;
    this.unsubscribes.push(policy.follow(this.caller(server), (event) => onEvent(server, event)));
    if (connection !== undefined) this.unsubscribes.push(connection.slot.on((event) => onEvent(server, event)));
  }

  /** The session's own connection to `server`, opened on first use (for a per-user server, with its token). */
  private openOwn(server: string): SessionConnection {
    const entry = this.registry.entry(server);
    const { sessionId } = this.options;
    const stdio = entry.config.transport === 'stdio';
    const connection = new SessionConnection({
      server,
      registry: this.registry,
      owner: this.options.owner,
      clientCapabilities: this.options.clientCapabilities,
      quota: entry.sessionChildren,
      idleTimeoutMs: stdio ? this.registry.childIdleTimeoutMs : undefined,
      // The session's own connection: a per-user server's token is the session's (credential-owner.ts).
      ...(sessionId === undefined ? {} : { credentialOwner: { kind: 'session' as const, session: sessionId, principal: this.key.principal } }),
      logger: this.options.logger,
    });
    this.own.set(server, connection);
    // The session's credentials attach once, over the servers it starts with; a reload does not
    // add a per-user server to a running gateway (config-diff.ts).
    if (entry.reach === 'perUser') this.perUser.set(server, connection);
    return connection;
  }

  /** Stops following the servers, drops the session's tokens and closes its own connections. */
  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.credentials?.close();
    await Promise.all([...this.own.values()].map((connection) => connection.close()));
  }

  /** This session's principal connection to `server`, if it is one and open now. */
  private principalLink(server: string): UpstreamLink | undefined {
    return this.registry.entry(server).policy.principalLink(this.caller(server));
  }
}
