/**
 * The routing scope of 2026-era requests (scopes.ts has the 2025 session's): no session. Which
 * connection serves each call is the server's connection policy's (upstream/connection-policy.ts:
 * a pooled lease charged to the request's principal, that principal's own connection, or the
 * primary); lists come from the primaries' caches, the caller's principal connection once open,
 * or a list-only connection declaring the request's capabilities (listing-connections.ts).
 */
import { LRUCache } from 'lru-cache';
import { Catalogue } from '../../catalogue/catalogue.js';
import type { Logger } from '../../observability/logger.js';
import type { UpstreamLink } from '../../upstream/link.js';
import { connectionKeyId, type ConnectionKey } from '../../upstream/principal-connections.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { ServerRoster } from '../../upstream/server-roster.js';
import type { Caller } from '../../upstream/connection-policy.js';
import { acceptsToolTasks } from '../tasks/task-capabilities.js';
import { sessionNeeded } from '../../upstream/credentials/user-tokens.js';
import { InputBridge } from '../input-bridge.js';
import { sameServers } from './session-visibility.js';
import { ListingConnections, listingSet } from './listing-connections.js';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { RouteScope } from '../router.js';
import type { ScopeOptions } from './scope-options.js';
import { admitToolFor } from '../admit.js';
import { seesAll, type AccessProfile } from '../../policy/access-policy.js';
import { narrowedView } from '../access-view.js';
import { TaskScope } from '../tasks/task-scope.js';
import type { TaskTable } from '../tasks/task-table.js';

/** A 2026 request's capability set, as the list-only connections are keyed (listing-connections.ts). */
type ListingSet = NonNullable<ReturnType<typeof listingSet>>;

/**
 * The routing scope of 2026-era requests. It is shared by every request of the endpoint; each
 * request routes through `forPrincipal`, the view of the principal that made it, so its leases
 * count against that principal (lease-pool.ts) and only that principal can resume the calls it
 * suspended for input.
 */
export class StatelessScope {
  private readonly roster: ServerRoster;
  /** The view over the primaries: every caller's when no server is isolated per principal. */
  readonly catalogue: Catalogue;
  private readonly inputBridge: InputBridge;
  private readonly registry: UpstreamRegistry;
  private readonly logger: Logger;
  private readonly options: ScopeOptions;
  private readonly principalServers = new Set<string>();
  /**
   * Views of callers with principal connections, capability-tailored lists or an access profile,
   * by key, capability set and profile; bounded (an evicted view is rebuilt from the link caches).
   */
  private readonly views = new LRUCache<string, Catalogue>({ max: 1024 });
  /** List-only connections initialised with a 2026 request's capabilities (listing-connections.ts). */
  private readonly listings: ListingConnections;
  /** The servers whose 2026 lists follow the request's capabilities (`isolation: "session"`). */
  private readonly tailored = new Set<string>();
  private readonly unsubscribe: () => void;
  private readonly taskTable: TaskTable | undefined;
  /** Servers taking each user's own credential: only a 2025 session can reach them. */
  private readonly perUser = new Set<string>();
  /** Servers reached per principal, with no primary (principal-bound.ts): out of the principal-less view. */
  private readonly perPrincipal = new Set<string>();

  constructor(options: ScopeOptions) {
    this.roster = options.servers;
    this.registry = options.registry;
    this.logger = options.logger;
    this.options = options;
    for (const server of options.servers.names) this.follow(server);
    this.unsubscribe = options.servers.onAdded((server) => this.follow(server));
    this.taskTable = options.tasks;
    this.inputBridge = new InputBridge({ max: 1000, ttlMs: options.inputTtlMs ?? 5 * 60_000 });
    this.listings = new ListingConnections({ registry: options.registry, logger: options.logger });
    const { servers, visibility } = options;
    const perPrincipal = this.perPrincipal;
    this.catalogue = new Catalogue(
      {
        // Read on every merge: a global enablement decision, or a server a reload adds, changes what
        // every caller sees. A server reached per principal has no list but a principal's: never in this view.
        get servers() {
          return (visibility?.visible(servers.names) ?? servers.names).filter((s) => !perPrincipal.has(s));
        },
        linkFor: (s) => this.primaryList(s),
        perCaller: (s) => this.principalServers.has(s),
      },
      { ...options.catalogue, logger: options.logger },
    );
  }

  /** The servers of the endpoint now, in merge order. */
  get servers(): readonly string[] {
    return this.roster.names;
  }

  /** Notes how one server's lists are reached, as its policy says. */
  private follow(server: string): void {
    const { reach, policy } = this.registry.entry(server);
    if (reach === 'perPrincipal') this.perPrincipal.add(server);
    const route = policy.route({ era: '2026' });
    if (route === 'sessionOnly') this.perUser.add(server);
    else if (route === 'principal') this.principalServers.add(server);
    else if (route === 'pool') this.tailored.add(server);
  }

  /**
   * The scope as the requests of `principal` (undefined without authentication) see it, in
   * `workspace` (the request's `_meta["portcullis/workspace"]`, if any).
   */
  forPrincipal(principal: string | undefined, workspace?: string, clientCapabilities?: ClientCapabilities, access?: AccessProfile): RouteScope {
    const key: ConnectionKey = { principal, workspace };
    const set = this.tailored.size === 0 ? undefined : listingSet(clientCapabilities);
    const tasks =
      this.taskTable === undefined
        ? undefined
        : // Tasks are the principal's (no session to bind them to) and live on the server's
          // primary connection, which no idle reaping or lease hands to anyone else.
          new TaskScope({
            table: this.taskTable,
            owner: `principal:${JSON.stringify(principal ?? null)}`,
            era: '2026',
            takesTasks: (server) => acceptsToolTasks(this.registry.entries.get(server)?.primary.current?.capabilities),
          });
    return {
      servers: this.servers,
      catalogue: this.catalogueFor(key, access, set),
      access,
      // Not for a caller the access rules narrow: the customisation list names what they hide.
      gatewayResources:
        this.options.gatewayResources === undefined || !seesAll(access)
          ? undefined
          : this.options.gatewayResources.forCaller(workspace === undefined ? {} : { workspace }),
      // The caller's own view: its loaded tools are kept per principal and workspace.
      tools: this.options.tools?.callerView(principal, workspace),
      inputBridge: this.inputBridge.for(principal),
      admitTool: admitToolFor(this.options.limiter, principal),
      withLink: (server, fn) => this.withLink(server, key, fn),
      tasks,
      withTaskLink: tasks === undefined ? undefined : (server, fn) => this.registry.entry(server).policy.run({ era: '2026', key, task: true }, fn),
      // A 2026 request holds no connection of its own: no subscription to note, nothing to relay, no level to keep.
      noteSubscription: undefined,
      broadcast: undefined,
      setLogLevel: undefined,
    };
  }

  /**
   * The catalogue over the primaries as a caller with `access` sees it: the endpoint's own when
   * nothing is hidden from it, else one per access profile — callers matching the same rules share
   * it, no other caller ever reads it. A 2025 session with no connection of its own lists from it.
   * A caller whose workspace's enablement decisions show other servers than a workspace-less
   * caller sees gets a view of that workspace's (keyed by it too: never read by another workspace).
   */
  catalogueFor(key: ConnectionKey | undefined, access: AccessProfile | undefined, set?: ListingSet): Catalogue {
    const narrowed = !seesAll(access);
    const perCaller = key !== undefined && this.principalServers.size > 0;
    const workspace = this.decidingWorkspace(key?.workspace);
    if (!narrowed && !perCaller && set === undefined && workspace === undefined) return this.catalogue;
    return this.viewOf(perCaller ? key : undefined, narrowed ? access : undefined, set, workspace);
  }

  /** `workspace` when its enablement decisions make it see other servers than a workspace-less caller now. */
  private decidingWorkspace(workspace: string | undefined): string | undefined {
    const visibility = this.options.visibility;
    if (workspace === undefined || visibility === undefined) return undefined;
    return sameServers(visibility.visible(this.servers, workspace), visibility.visible(this.servers)) ? undefined : workspace;
  }

  /**
   * The catalogue of one caller: principal servers listed from its own connection once open,
   * `session` servers from a connection declaring the request's capability set (if any), all
   * narrowed to its access profile (if any), over the servers its workspace's enablement shows.
   */
  private viewOf(key: ConnectionKey | undefined, access: AccessProfile | undefined, set: ListingSet | undefined, workspace: string | undefined): Catalogue {
    const id = `${key === undefined ? '' : connectionKeyId(key)}\n${set?.key ?? ''}#${access?.key ?? ''}@${workspace === undefined ? '' : JSON.stringify(workspace)}`;
    let view = this.views.get(id);
    if (view === undefined) {
      const registry = this.registry;
      const { servers, visibility } = this.options;
      view = new Catalogue(
        {
          // Read on every merge: enablement can change while the view is cached.
          get servers() {
            return visibility?.visible(servers.names, workspace) ?? servers.names;
          },
          // The caller's principal connection once open (or opened for a server with no primary),
          // else a list-only connection declaring the request's capabilities, else the primary.
          linkFor: async (s) => {
            const policy = registry.entry(s).policy;
            const route = policy.route({ era: '2026' });
            if (route === 'pool') return this.listings.linkFor(s, set) ?? this.primaryList(s);
            // A view without a key is every caller's: never one principal's connection.
            if (key === undefined) return this.primaryList(s);
            const caller: Caller = { era: '2026', key };
            return policy.listLink(caller);
          },
          perCaller: (s) => this.principalServers.has(s),
        },
        { ...narrowedView(this.options.catalogue, access), logger: this.logger },
      );
      this.views.set(id, view);
    }
    return view;
  }

  /** Closes the list-only connections this scope opened (the registry's own close the rest). */
  close(): Promise<void> {
    this.unsubscribe();
    return this.listings.close();
  }

  /** The primary's lists of `server`; a per-user server's need a session's token: refused, saying so. */
  private primaryList(server: string): Promise<UpstreamLink> {
    return this.perUser.has(server) ? Promise.reject(sessionNeeded(server)) : this.registry.entry(server).primary.get();
  }

  /** Runs `fn` on the connection the server's policy gives a 2026 request of `key`, held for the call. */
  private withLink<T>(server: string, key: ConnectionKey, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    return this.registry.entry(server).policy.run({ era: '2026', key }, fn);
  }
}
