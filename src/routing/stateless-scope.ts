/**
 * The routing scope of 2026-era requests (scopes.ts has the 2025 session's): no session; lists
 * come from the primaries' caches and each call leases a connection for its duration, charged to
 * the principal that made the request; an `isolation: "principal"` server is reached through the
 * connection of the request's principal and workspace.
 */
import { LRUCache } from 'lru-cache';
import { Catalogue } from '../catalogue/catalogue.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamLink } from '../upstream/link.js';
import { connectionKeyId, type ConnectionKey } from '../upstream/principal-connections.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import type { ServerRoster } from '../upstream/server-roster.js';
import { primaryHeld, principalHeld, principalListLink, takesTasksVia, withReinitialise } from './held-link.js';
import { InputBridge } from './input-bridge.js';
import { sameServers } from './session-visibility.js';
import { ListingConnections, listingSet } from './listing-connections.js';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { RouteScope } from './router.js';
import type { ScopeOptions } from './scope-options.js';
import { admitToolFor } from './admit.js';
import { seesAll, type AccessProfile } from '../policy/access-policy.js';
import { narrowedView } from './access-view.js';
import { TaskScope } from './tasks/task-scope.js';
import type { TaskTable } from './tasks/task-table.js';
import { sessionNeeded } from '../upstream/credentials/user-tokens.js';

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
        linkFor: (s) => this.sessionOnly(s) ?? options.registry.entry(s).primary.get(),
        perCaller: (s) => this.principalServers.has(s),
      },
      { ...options.catalogue, logger: options.logger },
    );
  }

  /** The servers of the endpoint now, in merge order. */
  get servers(): readonly string[] {
    return this.roster.names;
  }

  /** Notes how one server's lists and calls are reached (its isolation). */
  private follow(server: string): void {
    const { config, reach } = this.registry.entry(server);
    if (reach === 'perPrincipal') this.perPrincipal.add(server);
    if (reach === 'perUser') this.perUser.add(server);
    else if (config.isolation === 'principal') this.principalServers.add(server);
    else if (config.isolation === 'session') this.tailored.add(server);
  }

  /**
   * The scope as the requests of `principal` (undefined without authentication) see it, in
   * `workspace` (the request's `_meta["portcullis/workspace"]`, if any).
   */
  forPrincipal(principal: string | undefined, workspace?: string, clientCapabilities?: ClientCapabilities, access?: AccessProfile): RouteScope {
    const key: ConnectionKey = { principal, workspace };
    const set = this.tailored.size === 0 ? undefined : listingSet(clientCapabilities);
    return {
      servers: this.servers,
      catalogue: this.catalogueFor(key, access, set),
      ...(access === undefined ? {} : { access }),
      // Not for a caller the access rules narrow: the customisation list names what they hide.
      ...(this.options.gatewayResources === undefined || !seesAll(access)
        ? {}
        : { gatewayResources: this.options.gatewayResources.forCaller(workspace === undefined ? {} : { workspace }) }),
      // The caller's own view: its loaded tools are kept per principal and workspace.
      ...(this.options.tools === undefined ? {} : { tools: this.options.tools.callerView(principal, workspace) }),
      inputBridge: this.inputBridge.for(principal),
      admitTool: admitToolFor(this.options.limiter, principal),
      withLink: (server, fn) => this.withLink(server, key, fn),
      ...(this.taskTable === undefined
        ? {}
        : {
            // Tasks are the principal's (no session to bind them to) and live on the server's
            // primary connection, which no idle reaping or lease hands to anyone else.
            tasks: new TaskScope({
              table: this.taskTable,
              owner: `principal:${JSON.stringify(principal ?? null)}`,
              era: 'modern',
              takesTasks: takesTasksVia(this.registry),
            }),
            withTaskLink: (server, fn) => this.withPrimary(server, fn),
          }),
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
          linkFor: async (s) =>
            this.sessionOnly(s) ??
            (key === undefined ? undefined : registry.entry(s).principals?.current(key)) ??
            // A server with no primary lists from the caller's principal connection, opened for it.
            (this.perPrincipal.has(s) ? principalListLink(registry, s, key) : undefined) ??
            this.listings.linkFor(s, set) ??
            registry.entry(s).primary.get(),
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

  /** A per-user server is reached only with a session's token: refused here, saying so. */
  private sessionOnly(server: string): Promise<never> | undefined {
    return this.perUser.has(server) ? Promise.reject(sessionNeeded(server)) : undefined;
  }

  private withPrimary<T>(server: string, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    return this.sessionOnly(server) ?? withReinitialise(server, this.registry, this.logger, primaryHeld(this.registry, server), fn);
  }

  private withLink<T>(server: string, key: ConnectionKey, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    if (this.principalServers.has(server)) return withReinitialise(server, this.registry, this.logger, principalHeld(this.registry, server, key), fn);
    const refused = this.sessionOnly(server);
    if (refused !== undefined) return refused;
    const principal = key.principal;
    return withReinitialise(server, this.registry, this.logger, async () => {
      const lease = await this.registry.lease(server, principal);
      return { link: lease.link, drop: async () => lease.discard(), release: () => lease.release() };
    }, fn);
  }
}
