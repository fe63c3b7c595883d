/**
 * The two ways a request finds its upstream connections (`StatelessScope` in stateless-scope.ts):
 * - `SessionScope` (2025 clients): each server with `isolation: "session"` gets a connection of
 *   the session's own (`session-connection.ts`), opened on the session's first use of that
 *   server and reaped when it closes; until then its lists come from the primary. `shared`
 *   servers use the registry's primary connection.
 * - `StatelessScope` (2026 clients): no session; lists come from the primaries' caches and each
 *   call leases a connection for its duration, charged to the principal that made the request.
 * In both, an `isolation: "principal"` server is reached through the connection of the
 * request's principal and workspace (upstream/principal-connections.ts), the same for both eras;
 * until that connection is open its lists come from the primary.
 */
import { randomUUID } from 'node:crypto';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { Catalogue, type CatalogueOptions } from '../catalogue/catalogue.js';
import { LoadedTools } from '../catalogue/surface/loaded-tools.js';
import type { SessionTools, ToolSurface, ToolsView } from '../catalogue/surface/tool-surface.js';
import type { SessionServersGate } from '../config/session-servers.js';
import type { VisibilityFilter } from '../catalogue/merge.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamLink } from '../upstream/link.js';
import { connectionKeyId, type ConnectionKey } from '../upstream/principal-connections.js';
import type { RequestLimiter } from '../policy/request-limits.js';
import type { AccessProfile } from '../policy/access-policy.js';
import { narrowedView } from './access-view.js';
import { ProfileCatalogues, profileKey, scopeAtAccess } from './access-scope.js';
import { admitFor } from './admit.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import type { ServerRoster } from '../upstream/server-roster.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';
import type { LinkEvent } from '../upstream/link-event.js';
import type { CallerResources, GatewayResources } from './gateway-resources.js';
import { primaryHeld, principalHeld, principalListLink, takesTasksVia, withReinitialise } from './held-link.js';
import { reachedPerPrincipal } from '../upstream/credentials/principal-bound.js';
import { SessionVisibility } from './session-visibility.js';
import type { ServerVisibility } from './visibility.js';
import { SessionConnection } from './session-connection.js';
import { SessionCredentials } from './session-credentials.js';
import { takesUserTokens, type UserTokens } from '../upstream/credentials/user-tokens.js';
import type { RouteScope } from './router.js';
import { TaskScope } from './tasks/task-scope.js';
import type { TaskTable } from './tasks/task-table.js';

export interface ScopeOptions {
  registry: UpstreamRegistry;
  /** The servers this endpoint shows, in merge order: the registry's roster grows when a reload adds one. */
  servers: ServerRoster;
  catalogue: Omit<CatalogueOptions, 'logger'>;
  /** Deferral, meta-tools and `tools/list` pages of this endpoint; absent: the merged list as is. */
  tools?: ToolSurface;
  logger: Logger;
  /** 2026 clients: how long a call suspended for input waits for the client's retry (default 5 min). */
  inputTtlMs?: number;
  /** The endpoint's tasks (routing/tasks/); absent: tasks are not offered. */
  tasks?: TaskTable;
  /** Which servers each caller sees (enablement, visibility.ts); absent: every server, always. */
  visibility?: ServerVisibility;
  /** Resources the gateway itself serves on this endpoint (gateway-resources.ts); absent: none. */
  gatewayResources?: GatewayResources;
  /** The policy's request rates per principal; absent: not limited. */
  limiter?: RequestLimiter;
  /** Judges and filters the servers a 2025 client brings in `initialize` (session-servers-scope.ts); absent: the default policy's (none). */
  sessionServers?: SessionServersOptions;
  /** Sessions' own tokens for `perUser` servers (session-credentials.ts); absent: those servers get none. */
  userTokens?: UserTokens;
}

/** What an endpoint knows about servers its 2025 clients may bring. */
export interface SessionServersOptions {
  /** The policy's judgement of an `initialize` (config/session-servers.ts). */
  readonly gate: SessionServersGate;
  /** The policy's denied-tool globs, for their tools as for every other. */
  readonly policyAllows: VisibilityFilter;
}

/** What a session adds to its endpoint's scope options. */
export interface SessionScopeOptions {
  /** The principal that opened the session and the workspace its `initialize` named: its key on principal servers. */
  key?: ConnectionKey;
  /** The session's standalone stream: what no call can be credited with goes there. */
  owner: DownstreamSink;
  /** What the session's client declared in `initialize`: its own connections declare exactly that. */
  clientCapabilities: () => ClientCapabilities | undefined;
  /**
   * The endpoint's catalogue over the primaries as a caller with an access profile sees it, used
   * when this session can have no connection of its own (every server `isolation: "shared"`): the
   * merged view is then the same for every session of that profile, so it is built and kept
   * once, not once per session.
   */
  shared?: (access: AccessProfile | undefined) => Catalogue;
  /** A stdio session child with no call in flight is closed after this long (the session stays). */
  childIdleTimeoutMs?: number;
  /** The session's id: its enablement decisions are attached under it (never shown or stored). */
  sessionId?: string;
  /** What the policy's `access` rules let the token that opened the session see; absent: everything. */
  access?: AccessProfile;
}

export class SessionScope implements RouteScope {
  private readonly roster: ServerRoster;
  /** The session's merged lists per access profile, over the servers it sees. */
  private readonly ownCatalogues: ProfileCatalogues;
  /** The gateway's own resources; shown only to a request nothing is hidden from (see `forRequest`). */
  private readonly ownResources: CallerResources | undefined;
  /** Which servers this session sees (its enablement), and its workspace. */
  private readonly visibility: SessionVisibility;
  readonly tools: ToolsView | undefined;
  /** The session's deferral option and loaded tools: its own, never shared with another session. */
  private readonly toolState: SessionTools | undefined;
  private readonly registry: UpstreamRegistry;
  private readonly own = new Map<string, SessionConnection>();
  /** The session's own connections to its per-user servers (session-credentials.ts). */
  private readonly perUser = new Map<string, SessionConnection>();
  private readonly unsubscribes: Array<() => void> = [];
  private readonly subscriptions = new Set<string>();
  private readonly owner: DownstreamSink;
  private readonly logger: Logger;
  private readonly key: ConnectionKey;
  private readonly principalServers = new Set<string>();
  private readonly session: SessionScopeOptions;
  /** The endpoint's catalogue for sessions with no connection of their own (`SessionScopeOptions.shared`). */
  private readonly sharedCatalogue: ((access: AccessProfile | undefined) => Catalogue) | undefined;
  readonly tasks: TaskScope | undefined;
  readonly admit: RouteScope['admit'];
  /**
   * The access profile of the session's latest request (the token that opened it, until another
   * arrives): what session-level traffic — its standalone stream's resource updates, log levels —
   * is judged by. Each request's own lists and calls are judged by its own (`forRequest`).
   */
  private current: AccessProfile | undefined;
  private readonly taskTable: TaskTable | undefined;
  /** The session's key in the task table: random, never the session id itself. */
  private readonly taskOwner = `session:${randomUUID()}`;
  /** Its own tokens for `perUser` servers; undefined when it reaches none. */
  private readonly credentials: SessionCredentials | undefined;

  constructor(options: ScopeOptions, session: SessionScopeOptions) {
    this.roster = options.servers;
    this.registry = options.registry;
    this.owner = session.owner;
    this.logger = options.logger;
    this.session = session;
    this.key = session.key ?? { principal: undefined, workspace: undefined };
    this.visibility = new SessionVisibility({
      visibility: options.visibility,
      servers: options.servers,
      sessionId: session.sessionId,
      principal: this.key.principal,
      namedWorkspace: this.key.workspace,
      owner: this.owner,
    });
    const enablement = this.visibility.enablement;
    const owner = this.owner;
    this.ownResources = options.gatewayResources?.forCaller({
      ...(enablement === undefined ? {} : { session: enablement }),
      ...(this.key.workspace === undefined ? {} : { workspace: this.key.workspace }),
      // Updates of the customisation list stop while the session's latest token is one the rules narrow.
      sink: {
        canRequest: owner.canRequest,
        get clientCapabilities() {
          return owner.clientCapabilities;
        },
        request: (message, signal) => owner.request(message, signal),
        notify: (message) => (this.resourcesFor(this.current) === undefined ? Promise.resolve() : owner.notify(message)),
      },
    });
    this.admit = admitFor(options.limiter, this.key.principal);
    this.current = session.access;
    const surface = options.tools;
    this.toolState =
      surface === undefined
        ? undefined
        : {
            deferTools: undefined,
            loaded: new LoadedTools(surface.maxLoadedTools),
            announce: () => void this.owner.notify({ method: 'notifications/tools/list_changed' }).catch(() => undefined),
          };
    this.tools = this.toolState === undefined ? undefined : surface?.view(this.toolState);
    this.taskTable = options.tasks;
    this.tasks =
      options.tasks === undefined
        ? undefined
        : new TaskScope({
            table: options.tasks,
            owner: this.taskOwner,
            era: 'legacy',
            statusSink: session.owner,
            takesTasks: takesTasksVia(options.registry),
            // A task on the session's own child lives as long as that child: keep it while the task does.
            pin: (server, link) => this.own.get(server)?.pin(link),
          });
    for (const server of options.servers.names) this.attach(server);
    this.credentials = SessionCredentials.attach(options.userTokens, {
      sessionId: session.sessionId,
      principal: this.key.principal,
      connections: this.perUser,
      owner: this.owner,
      logger: options.logger,
      // Its enablement and its latest token's access rules: a token for a server hidden from it is refused.
      visible: (server) => this.visibility.visibleServers().includes(server) && this.current?.serverParts(server).allowed !== false,
    });
    // A server a reload adds: reachable as the others are, and the session hears its lists changed
    // unless its enablement hides the server (the access rules may still show some of its tools,
    // so they do not silence it, as they silence no upstream's own list_changed).
    this.unsubscribes.push(
      options.servers.onAdded((server) => {
        this.attach(server);
        if (this.visibility.visibleServers().includes(server)) {
          for (const list of ['tools', 'prompts', 'resources'] as const) this.onLinkEvent(server, { kind: 'listChanged', list });
        }
      }),
    );
    // Until the session's first use of a server, its lists come from that server's primary (a
    // connection of the same server, configured the same way); from then on, from its own.
    this.sharedCatalogue = session.shared;
    const scope = this;
    this.ownCatalogues = new ProfileCatalogues(
      (access) =>
        new Catalogue(
          {
            get servers() {
              return scope.visibility.visibleServers();
            },
            linkFor: (s) => this.listLink(s),
            perCaller: (s) => this.principalServers.has(s) || this.credentials?.covers(s) === true,
          },
          { ...narrowedView(options.catalogue, access), logger: options.logger },
        ),
    );
  }

  /** The access profile of the session's latest request (undefined: the policy has no access rules). */
  get access(): AccessProfile | undefined {
    return this.current;
  }

  /** The session's merged lists, as its latest request's profile sees them. */
  get catalogue(): Catalogue {
    return this.catalogueOf(this.current);
  }

  /**
   * The session's merged lists as `access` sees them. The endpoint's shared catalogue (of that
   * profile) serves them while the session sees exactly what a sessionless caller sees (no
   * decision of its own or its workspace's hides anything).
   */
  catalogueOf(access: AccessProfile | undefined): Catalogue {
    // Only while the session can have no connection of its own (a reload may add a server it could).
    const shared = this.own.size === 0 && this.principalServers.size === 0 ? this.sharedCatalogue : undefined;
    return shared !== undefined && this.visibility.seesShared() ? shared(access) : this.ownCatalogues.for(access);
  }

  /**
   * The customisation list names every server, plugin and agent: a request the access rules
   * narrow would learn what they hide from it, so it is not offered one.
   */
  resourcesFor(access: AccessProfile | undefined): CallerResources | undefined {
    return access === undefined || access.unrestricted ? this.ownResources : undefined;
  }

  get gatewayResources(): CallerResources | undefined {
    return this.resourcesFor(this.current);
  }

  /**
   * A request of this session arrived with `access` (its own token's profile): it becomes the
   * session's current profile, and when that differs from the one before, the session's lists
   * may have changed — its client hears `list_changed` of tools, prompts and resources and
   * lists again under the new profile.
   */
  noteAccess(access: AccessProfile | undefined): void {
    const before = profileKey(this.current);
    this.current = access;
    if (profileKey(access) === before) return;
    for (const list of ['tools', 'prompts', 'resources']) {
      void this.owner.notify({ method: `notifications/${list}/list_changed` }).catch(() => undefined);
    }
  }

  /** This scope as a request with `access` sees it (its lists and checks are that profile's). */
  forRequest(access: AccessProfile | undefined): RouteScope {
    if (profileKey(access) === profileKey(this.current)) return this;
    return scopeAtAccess(this, { catalogue: this.catalogueOf(access), access, gatewayResources: this.resourcesFor(access) });
  }

  /** The servers of the endpoint, in merge order (a reload may have added some since the session opened). */
  get servers(): readonly string[] {
    return this.roster.names;
  }

  /** The session's standalone stream is open: the gateway may now ask its client for roots. */
  streamOpened(): void {
    this.visibility.streamOpened();
  }

  /** The connection this session's lists of `server` come from: its own once open, else the primary. */
  async listLink(server: string): Promise<UpstreamLink> {
    // A per-user server lists from the session's own connection only, with the session's token.
    if (this.credentials?.covers(server) === true) return this.credentials.listLink(server);
    const entry = this.registry.entry(server);
    // A server with no primary lists from the session's principal connection, opened for it.
    if (reachedPerPrincipal(entry.config)) return this.principalLink(server) ?? principalListLink(this.registry, server, this.key);
    return this.own.get(server)?.current ?? this.principalLink(server) ?? entry.primary.get();
  }

  /** This session's principal connection to `server`, if it is one and open now. */
  private principalLink(server: string): UpstreamLink | undefined {
    return this.registry.entry(server).principals?.current(this.key);
  }

  /** The session's `deferTools` init option (read from its `initialize`); undefined: no preference. */
  setDeferTools(value: boolean | undefined): void {
    if (this.toolState !== undefined) this.toolState.deferTools = value;
  }

  withLink<T>(server: string, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    const own = this.own.get(server);
    if (own !== undefined) {
      if (this.credentials?.covers(server) === true) return this.credentials.run(server, (acquire) => withReinitialise(server, this.registry, this.logger, acquire, fn));
      return withReinitialise(server, this.registry, this.logger, () => own.acquire(), fn);
    }
    if (this.principalServers.has(server)) return withReinitialise(server, this.registry, this.logger, principalHeld(this.registry, server, this.key), fn);
    return withReinitialise(server, this.registry, this.logger, primaryHeld(this.registry, server), fn);
  }

  noteSubscription(server: string, uri: string, subscribed: boolean): void {
    const key = `${server}\n${uri}`;
    if (subscribed === this.subscriptions.has(key)) return;
    if (subscribed) this.subscriptions.add(key);
    else this.subscriptions.delete(key);
    this.own.get(server)?.noteSubscription(subscribed);
    this.registry.entry(server).principals?.noteSubscription(this.key, subscribed);
  }

  /**
   * `logging/setLevel`: the session's own connections get it now if open, and when they open
   * later (a level is no reason to spawn a child); `shared` servers get it on the primary.
   */
  async setLogLevel(params: Record<string, unknown>, sink: DownstreamSink): Promise<void> {
    // Only servers this session may see: a level is no way to reach a hidden server.
    const catalogue = this.catalogue;
    await Promise.all(
      this.servers.filter((server) => catalogue.showsServer(server)).map((server) => {
        const own = this.own.get(server);
        // A principal connection is shared by the principal's sessions: set on it only while open.
        const principal = this.principalServers.has(server) ? this.principalLink(server) : undefined;
        const setting =
          own !== undefined
            ? own.setLogLevel(params)
            : this.principalServers.has(server)
              ? principal !== undefined && principal.capabilities.logging !== undefined
                ? principal.request('logging/setLevel', params, { sink }).then(() => undefined)
                : Promise.resolve()
              : this.withLink(server, async (link) => {
                if (link.capabilities.logging !== undefined) await link.request('logging/setLevel', params, { sink });
              });
        // One upstream that fails does not fail the others.
        return setting.catch(() => undefined);
      }),
    );
  }

  /** Client notifications go to the session's own live connections only, never to shared ones. */
  broadcast(message: RpcMessage): void {
    if (message.method === 'notifications/roots/list_changed') this.visibility.rootsChanged();
    for (const connection of this.own.values()) void connection.current?.notify(message).catch(() => undefined);
  }

  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.visibility.close();
    this.ownResources?.close();
    // The principal connection outlives the session: the subscriptions it held there go with it.
    for (const key of this.subscriptions) {
      const server = key.slice(0, key.indexOf('\n'));
      this.registry.entry(server).principals?.noteSubscription(this.key, false);
    }
    this.subscriptions.clear();
    this.taskTable?.forgetOwner(this.taskOwner);
    this.credentials?.close();
    await Promise.all([...this.own.values()].map((connection) => connection.close()));
  }

  /** Follows one server of the endpoint: its list changes and updates reach this session, through the connection its lists come from. */
  private attach(server: string): void {
    const keyId = connectionKeyId(this.key);
    const entry = this.registry.entry(server);
    const principals = entry.principals;
    if (principals !== undefined) {
      this.principalServers.add(server);
      // This principal's connection is the session's: its changes and updates reach the session,
      // and the primary's list changes do while the session's lists come from the primary.
      this.unsubscribes.push(
        principals.on((key, event) => {
          if (connectionKeyId(key) === keyId) this.onLinkEvent(server, event);
        }),
        entry.primary.on((event) => {
          if (event.kind === 'listChanged' && principals.current(this.key) === undefined) this.onLinkEvent(server, event);
        }),
      );
      return;
    }
    if (entry.config.isolation !== 'session') {
      this.unsubscribes.push(entry.primary.on((event) => this.onLinkEvent(server, event)));
      return;
    }
    // The primary's list changes reach the session while its lists come from the primary.
    this.unsubscribes.push(
      entry.primary.on((event) => {
        if (event.kind === 'listChanged' && this.own.get(server)?.current === undefined) this.onLinkEvent(server, event);
      }),
    );
    const stdio = entry.config.transport === 'stdio';
    const connection = new SessionConnection({
      server,
      registry: this.registry,
      owner: this.session.owner,
      clientCapabilities: this.session.clientCapabilities,
      quota: entry.sessionChildren,
      idleTimeoutMs: stdio ? this.session.childIdleTimeoutMs : undefined,
      // The session's own connection: a per-user server's token is the session's (credential-owner.ts).
      ...(this.session.sessionId === undefined ? {} : { credentialOwner: { kind: 'session' as const, session: this.session.sessionId, principal: this.key.principal } }),
      logger: this.logger,
    });
    this.own.set(server, connection);
    // The session's credentials attach once, over the servers it starts with; a reload does not
    // add a per-user server to a running gateway (config-diff.ts).
    if (takesUserTokens(entry.config)) this.perUser.set(server, connection);
    this.unsubscribes.push(connection.slot.on((event) => this.onLinkEvent(server, event)));
  }

  private onLinkEvent(server: string, event: LinkEvent): void {
    const notify = (method: string, params?: Record<string, unknown>) =>
      void this.owner.notify(params === undefined ? { method } : { method, params }).catch(() => undefined);
    switch (event.kind) {
      case 'listChanged':
        notify(`notifications/${event.list}/list_changed`);
        return;
      case 'resourceUpdated':
        // Judged by the session's current profile: a server its latest token may not see sends it nothing.
        if (this.subscriptions.has(`${server}\n${String(event.params.uri)}`) && this.catalogue.showsServer(server)) {
          notify('notifications/resources/updated', event.params);
        }
        return;
      case 'closed':
      case 'taskStatus': // routed by the endpoint's task table, which knows whose task it is
        return;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  }
}

export { StatelessScope } from './stateless-scope.js';
