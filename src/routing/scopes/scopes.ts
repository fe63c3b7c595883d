/**
 * The routing scope of a 2025 session (`SessionScope`; the 2026 one, `StatelessScope`, is in
 * stateless-scope.ts and re-exported here): what the router sees of one session — its merged
 * lists as each request's access profile sees them (access-scope.ts), the servers its enablement
 * shows (session-visibility.ts), its tool surface, tasks, rates and the gateway's own resources.
 * Which connection reaches each server — the session's own for `isolation: "session"`, its
 * principal's for `"principal"`, the primary for `shared` — is session-links.ts; what of their
 * events its client hears, and its resource subscriptions, `SessionNotifications` below.
 */
import { randomUUID } from 'node:crypto';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { Catalogue } from '../../catalogue/catalogue.js';
import { LoadedTools } from '../../catalogue/surface/loaded-tools.js';
import type { SessionTools, ToolsView } from '../../catalogue/surface/tool-surface.js';
import type { LinkEvent, UpstreamLink } from '../../upstream/link.js';
import type { ConnectionKey } from '../../upstream/principal-connections.js';
import { seesAll, showsServer, type AccessProfile } from '../../policy/access-policy.js';
import { narrowedView } from '../access-view.js';
import { ProfileCatalogues, profileKey, scopeAtAccess } from './access-scope.js';
import { admitToolFor } from '../admit.js';
import type { ServerRoster } from '../../upstream/server-roster.js';
import { announceListsChanged } from '../../upstream/server-changes.js';
import { notifyListsChanged, type DownstreamSink, type RpcMessage } from '../../rpc/sink.js';
import type { CallerResources } from '../gateway-resources.js';
import { acceptsToolTasks } from '../tasks/task-capabilities.js';
import { SessionVisibility } from './session-visibility.js';
import { SessionLinks } from './session-links.js';
import type { ScopeOptions } from './scope-options.js';
import type { RouteScope } from '../router.js';
import { TaskScope } from '../tasks/task-scope.js';
import type { TaskTable } from '../tasks/task-table.js';

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
  /** The connection the session reaches each server through (session-links.ts). */
  private readonly links: SessionLinks;
  /** Its resource subscriptions, and which upstream events its client hears (`SessionNotifications` below). */
  private readonly notifications: SessionNotifications;
  private readonly unsubscribes: Array<() => void> = [];
  private readonly owner: DownstreamSink;
  /** The endpoint's catalogue for sessions with no connection of their own (`SessionScopeOptions.shared`). */
  private readonly sharedCatalogue: ((access: AccessProfile | undefined) => Catalogue) | undefined;
  readonly tasks: TaskScope | undefined;
  readonly admitTool: RouteScope['admitTool'];
  /** A session's tasks live on the connection its calls use. */
  readonly withTaskLink: RouteScope['withTaskLink'] = undefined;
  /** A 2025 client takes an upstream's requests itself: nothing to bridge. */
  readonly inputBridge: RouteScope['inputBridge'] = undefined;
  /**
   * The access profile of the session's latest request (the token that opened it, until another
   * arrives): what session-level traffic — its standalone stream's resource updates, log levels —
   * is judged by. Each request's own lists and calls are judged by its own (`forRequest`).
   */
  private current: AccessProfile | undefined;
  private readonly taskTable: TaskTable | undefined;
  /** The session's key in the task table: random, never the session id itself. */
  private readonly taskOwner = `session:${randomUUID()}`;

  constructor(options: ScopeOptions, session: SessionScopeOptions) {
    this.roster = options.servers;
    this.owner = session.owner;
    this.notifications = new SessionNotifications(session.owner, (server) => this.catalogue.showsServer(server));
    const key = session.key ?? { principal: undefined, workspace: undefined };
    this.visibility = new SessionVisibility({
      visibility: options.visibility,
      servers: options.servers,
      sessionId: session.sessionId,
      principal: key.principal,
      namedWorkspace: key.workspace,
      owner: this.owner,
    });
    const enablement = this.visibility.enablement;
    const owner = this.owner;
    this.ownResources = options.gatewayResources?.forCaller({
      ...(enablement === undefined ? {} : { session: enablement }),
      ...(key.workspace === undefined ? {} : { workspace: key.workspace }),
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
    this.admitTool = admitToolFor(options.limiter, key.principal);
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
            era: '2025',
            statusSink: session.owner,
            takesTasks: (server) => acceptsToolTasks(options.registry.entries.get(server)?.primary.current?.capabilities),
            // A task on the session's own child lives as long as that child: keep it while the task does.
            pin: (server, link) => this.links.pin(server, link),
          });
    this.links = new SessionLinks(
      {
        registry: options.registry,
        key,
        owner: session.owner,
        clientCapabilities: session.clientCapabilities,
        sessionId: session.sessionId,
        userTokens: options.userTokens,
        // Its enablement and its latest token's access rules: a token for a server hidden from it is refused.
        visible: (server) => this.visibility.visibleServers().includes(server) && showsServer(this.current, server),
        logger: options.logger,
        onEvent: (server, event) => this.notifications.relay(server, event),
      },
      options.servers.names,
    );
    // A server a reload adds: reachable as the others are, and the session hears its lists changed
    // unless its enablement hides the server (the access rules may still show some of its tools,
    // so they do not silence it, as they silence no upstream's own list_changed).
    this.unsubscribes.push(
      options.servers.onAdded((server) => {
        this.links.attach(server);
        if (this.visibility.visibleServers().includes(server)) {
          announceListsChanged((list) => this.notifications.relay(server, { kind: 'listChanged', list }));
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
            perCaller: (s) => this.links.perCaller(s),
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
    const shared = this.links.hasOwnConnections ? undefined : this.sharedCatalogue;
    return shared !== undefined && this.visibility.seesShared() ? shared(access) : this.ownCatalogues.for(access);
  }

  /**
   * The customisation list names every server, plugin and agent: a request the access rules
   * narrow would learn what they hide from it, so it is not offered one.
   */
  resourcesFor(access: AccessProfile | undefined): CallerResources | undefined {
    return seesAll(access) ? this.ownResources : undefined;
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
    notifyListsChanged(this.owner);
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
  listLink(server: string): Promise<UpstreamLink> {
    return this.links.listLink(server);
  }

  /** The session's `deferTools` init option (read from its `initialize`); undefined: no preference. */
  setDeferTools(value: boolean | undefined): void {
    if (this.toolState !== undefined) this.toolState.deferTools = value;
  }

  withLink<T>(server: string, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    return this.links.withLink(server, fn);
  }

  noteSubscription(server: string, uri: string, subscribed: boolean): void {
    if (this.notifications.noteSubscription(server, uri, subscribed)) this.links.noteSubscription(server, subscribed);
  }

  /**
   * `logging/setLevel`: the session's own connections get it now if open, and when they open
   * later (a level is no reason to spawn a child); `shared` servers get it on the primary.
   */
  async setLogLevel(params: Record<string, unknown>, sink: DownstreamSink): Promise<void> {
    // Only servers this session may see: a level is no way to reach a hidden server.
    const catalogue = this.catalogue;
    await Promise.all(
      this.servers
        .filter((server) => catalogue.showsServer(server))
        // One upstream that fails does not fail the others.
        .map((server) => this.links.setLogLevel(server, params, sink).catch(() => undefined)),
    );
  }

  /** Client notifications go to the session's own live connections only, never to shared ones. */
  broadcast(message: RpcMessage): void {
    if (message.method === 'notifications/roots/list_changed') this.visibility.rootsChanged();
    this.links.broadcast(message);
  }

  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.visibility.close();
    this.ownResources?.close();
    for (const server of this.notifications.clear()) this.links.releaseSubscription(server);
    this.taskTable?.forgetOwner(this.taskOwner);
    await this.links.close();
  }
}

/*
 * What a 2025 session's client hears from its upstreams on its standalone stream, and the
 * resource subscriptions that decide part of it (`SessionScope` above relays every event
 * of the connections session-links.ts follows through this):
 * - a server's list change: always (`notifications/<list>/list_changed`; the client lists again,
 *   through whatever its access rules and enablement show);
 * - a resource's update: only while the session is subscribed to that resource and its current
 *   access profile sees the server — a server its latest token may not see sends it nothing;
 * - a connection's close and task status: never here (the endpoint's task table routes status).
 */
export class SessionNotifications {
  /** `server\nuri` of each resource the session is subscribed to. */
  private readonly subscriptions = new Set<string>();

  /**
   * @param owner the session's standalone stream.
   * @param shows whether the session's current profile sees `server`, read at each update.
   */
  constructor(
    private readonly owner: DownstreamSink,
    private readonly shows: (server: string) => boolean,
  ) {}

  /** Notes a `resources/subscribe` or `unsubscribe`; false when it changes nothing (already so). */
  noteSubscription(server: string, uri: string, subscribed: boolean): boolean {
    const key = `${server}\n${uri}`;
    if (subscribed === this.subscriptions.has(key)) return false;
    if (subscribed) this.subscriptions.add(key);
    else this.subscriptions.delete(key);
    return true;
  }

  /** Forgets every subscription; answers the server of each, once per subscription it held. */
  clear(): string[] {
    const servers = [...this.subscriptions].map((key) => key.slice(0, key.indexOf('\n')));
    this.subscriptions.clear();
    return servers;
  }

  /** Turns an event of `server`'s connection into what the session's client hears, if anything. */
  relay(server: string, event: LinkEvent): void {
    const notify = (method: string, params?: Record<string, unknown>) =>
      void this.owner.notify(params === undefined ? { method } : { method, params }).catch(() => undefined);
    switch (event.kind) {
      case 'listChanged':
        notify(`notifications/${event.list}/list_changed`);
        return;
      case 'resourceUpdated':
        // Judged by the session's current profile: a server its latest token may not see sends it nothing.
        if (this.subscriptions.has(`${server}\n${String(event.params.uri)}`) && this.shows(server)) {
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
