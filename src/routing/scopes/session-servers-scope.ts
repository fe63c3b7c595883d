/**
 * A 2025 session with servers its client brought (`initialize` `_meta["portcullis/servers"]`,
 * judged by config/session-servers.ts): the session's own registry of them — a sibling of the
 * gateway's, same connector deps and egress guard, every server `isolation: "shared"` since the
 * registry is the session's alone — and the routing scope that joins them to the endpoint's
 * servers. They are exposed as `session.<name>` (tools `session.<name>__<tool>` with the default
 * separator), filtered by their own `enabledTools`/`disabledTools` and the policy's denied tools,
 * and seen by this session only; the principal's access profile and request rates apply to them
 * as to every server. Closing the scope closes the registry: their children are reaped with the
 * session.
 *
 * Opening waits for every server's first connection: a `required` one that fails refuses the
 * `initialize` (naming the server and a cause code, never its URL, command or headers) and
 * closes everything opened; an `optional` one keeps retrying in the background like any server.
 */
import { Catalogue, type CatalogueOptions } from '../../catalogue/catalogue.js';
import type { VisibilityFilter } from '../../catalogue/merge.js';
import type { ServerConfig } from '../../config/schema.js';
import { findCause, GatewayError, UpstreamHttpError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import { compileToolFilter } from '../../policy/tool-filter.js';
import type { DownstreamSink, RpcMessage } from '../../rpc/sink.js';
import { safeReason } from '../../upstream/failure.js';
import type { UpstreamLink } from '../../upstream/link.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { SlotState } from '../../upstream/slot.js';
import { narrowedView } from '../access-view.js';
import { ProfileCatalogues, profileKey, scopeAtAccess } from './access-scope.js';
import type { AccessProfile } from '../../policy/access-policy.js';
import type { RouteScope } from '../router.js';
import type { CallerResources } from '../gateway-resources.js';
import type { SessionScope } from './scopes.js';
import type { SessionServersOptions } from './scope-options.js';

/** The namespace of the servers a client brings: never a configured or plugin server's name. */
export const SESSION_SERVER_PREFIX = 'session.';

export interface OpenSessionServersOptions {
  /** The session's scope over the endpoint's servers. */
  readonly base: SessionScope;
  /** The gateway's registry (the session's is its sibling). */
  readonly registry: UpstreamRegistry;
  /** The servers as the client named them, judged. */
  readonly servers: Readonly<Record<string, ServerConfig>>;
  readonly settings: SessionServersOptions;
  readonly catalogue: Omit<CatalogueOptions, 'logger' | 'toolFilter'>;
  /** The session's standalone stream: their list changes go there. */
  readonly owner: DownstreamSink;
  readonly logger: Logger;
}

/** The cause code of a failed first connection: the gateway's own code below its wrapping (an egress refusal), else an HTTP status or errno code. */
function causeCode(error: unknown): string {
  const own = (value: unknown): value is GatewayError => value instanceof GatewayError && !(value instanceof UpstreamHttpError) && value.code !== 'UPSTREAM_START_FAILED';
  return findCause(error, own)?.code ?? safeReason(error);
}

export class SessionServersScope implements RouteScope {
  private readonly mine: readonly string[];
  /** The joined lists per access profile: the request's own profile narrows the servers it brought as every other. */
  private readonly catalogues: ProfileCatalogues;
  private readonly base: SessionScope;
  private readonly own: UpstreamRegistry;
  private readonly unsubscribes: Array<() => void> = [];
  private readonly subscriptions = new Set<string>();

  private constructor(options: OpenSessionServersOptions, own: UpstreamRegistry, filter: VisibilityFilter) {
    this.base = options.base;
    this.own = own;
    this.mine = [...own.entries.keys()];
    const isMine = (server: string) => own.entries.has(server);
    const scope = this;
    this.catalogues = new ProfileCatalogues(
      (access) =>
        new Catalogue(
          {
            // Read on every merge: the gateway's servers grow when a reload adds one.
            get servers() {
              return scope.servers;
            },
            linkFor: (server) => (isMine(server) ? own.entry(server).primary.get() : options.base.listLink(server)),
            perCaller: isMine,
          },
          {
            ...narrowedView(
              {
                ...options.catalogue,
                toolFilter: (server, name, exposed) =>
                  isMine(server) ? filter(server, name, exposed) : options.base.catalogueOf(access).toolVisible(server, name, exposed),
              },
              access,
            ),
            logger: options.logger,
          },
        ),
    );
    for (const entry of own.entries.values()) {
      this.unsubscribes.push(
        entry.primary.on((event) => {
          if (event.kind === 'listChanged') void options.owner.notify({ method: `notifications/${event.list}/list_changed` }).catch(() => undefined);
          else if (event.kind === 'resourceUpdated' && this.subscriptions.has(`${entry.name}\n${String(event.params.uri)}`)) {
            void options.owner.notify({ method: 'notifications/resources/updated', params: event.params }).catch(() => undefined);
          }
        }),
      );
    }
  }

  /**
   * The gateway's servers (a reload may add some), then the ones this session's client brought.
   * A name the client took first stays its own here: a gateway server a reload adds later under
   * the same name (`session.<name>`) is not shown to this session, never merged beside it.
   */
  get servers(): readonly string[] {
    return [...this.base.servers.filter((server) => !this.own.entries.has(server)), ...this.mine];
  }

  /**
   * Opens the servers a client brought; resolves with the joined scope, or with the refusal of
   * the `initialize` when a required one could not be started (everything opened is closed).
   */
  static async open(options: OpenSessionServersOptions): Promise<SessionServersScope | GatewayError> {
    const configs: Record<string, ServerConfig> = {};
    const filters = new Map<string, (tool: string) => boolean>();
    for (const [name, config] of Object.entries(options.servers)) {
      const exposed = `${SESSION_SERVER_PREFIX}${name}`;
      if (options.base.servers.includes(exposed)) {
        return new GatewayError('INVALID_PARAMS', `initialize: the server name "${name}" this client brought is taken by a server of the gateway`);
      }
      configs[exposed] = { ...config, isolation: 'shared' };
      filters.set(exposed, compileToolFilter({ enabledTools: config.enabledTools, disabledTools: config.disabledTools }));
    }
    const own = options.registry.sibling(configs);
    const failed = await Promise.all(
      [...own.entries.values()].map(async (entry) => {
        try {
          await entry.primary.get();
          return undefined;
        } catch (error) {
          options.logger.warn({ server: entry.name, code: causeCode(error) }, 'session server failed to start');
          return entry.config.mode === 'required' ? { server: entry.name, code: causeCode(error) } : undefined;
        }
      }),
    );
    const required = failed.find((f) => f !== undefined);
    if (required !== undefined) {
      await own.close();
      return new GatewayError('UPSTREAM_START_FAILED', `initialize: the required server "${required.server}" this client brought could not be started (${required.code})`, {
        server: required.server,
      });
    }
    const policyAllows = options.settings.policyAllows;
    const filter: VisibilityFilter = (server, name, exposed) => (filters.get(server)?.(name) ?? false) && policyAllows(server, name, exposed);
    return new SessionServersScope(options, own, filter);
  }

  /** The servers the client brought, with their primary connection's state (the session's customisation list). */
  brought(): Array<{ name: string; state: SlotState; lastError: unknown }> {
    return [...this.own.entries.values()].map((entry) => ({ name: entry.name, state: entry.primary.state, lastError: entry.primary.lastError }));
  }

  /** The joined lists as the session's latest request's profile sees them. */
  get catalogue(): Catalogue {
    return this.catalogues.for(this.base.access);
  }

  /** This scope as a request with `access` sees it (scopes.ts `forRequest`). */
  forRequest(access: AccessProfile | undefined): RouteScope {
    if (profileKey(access) === profileKey(this.base.access)) return this;
    return scopeAtAccess(this, { catalogue: this.catalogues.for(access), access, gatewayResources: this.base.resourcesFor(access) });
  }

  get access(): AccessProfile | undefined {
    return this.base.access;
  }

  /** The gateway's own resources, as the session sees them: the servers it brought change nothing there. */
  get gatewayResources(): CallerResources | undefined {
    return this.base.gatewayResources;
  }

  get withTaskLink() {
    return this.base.withTaskLink;
  }

  get inputBridge() {
    return this.base.inputBridge;
  }

  get tools() {
    return this.base.tools;
  }

  get tasks() {
    return this.base.tasks;
  }

  /** The session's per-tool rates: a server the client brought spends them like any other. */
  get admitTool() {
    return this.base.admitTool;
  }

  withLink<T>(server: string, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    if (!this.own.entries.has(server)) return this.base.withLink(server, fn);
    return this.own.entry(server).primary.get().then(fn);
  }

  noteSubscription(server: string, uri: string, subscribed: boolean): void {
    if (!this.own.entries.has(server)) return this.base.noteSubscription(server, uri, subscribed);
    if (subscribed) this.subscriptions.add(`${server}\n${uri}`);
    else this.subscriptions.delete(`${server}\n${uri}`);
  }

  broadcast(message: RpcMessage): void {
    this.base.broadcast(message);
    for (const entry of this.own.entries.values()) void entry.primary.current?.notify(message).catch(() => undefined);
  }

  async setLogLevel(params: Record<string, unknown>, sink: DownstreamSink): Promise<void> {
    await Promise.all([
      this.base.setLogLevel(params, sink),
      ...[...this.own.entries.values()].map(async (entry) => {
        const link = entry.primary.current;
        if (link?.capabilities.logging !== undefined) await link.request('logging/setLevel', params, { sink }).catch(() => undefined);
      }),
    ]);
  }

  /** Closes the session's own servers (their children reaped); the base scope is the session's to close. */
  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    await this.own.close();
  }
}
