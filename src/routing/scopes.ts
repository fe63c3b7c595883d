/**
 * The two ways a request finds its upstream connections:
 * - `SessionScope` (2025 clients): each server with `isolation: "session"` gets a connection of
 *   the session's own, created when the session initialises and reaped when it closes; `shared`
 *   servers use the registry's primary connection.
 * - `StatelessScope` (2026 clients): no session; lists come from the primaries' caches and each
 *   call leases a connection for its duration, charged to the principal that made the request.
 */
import { SdkHttpError } from '@modelcontextprotocol/client';
import { Catalogue, type CatalogueOptions } from '../catalogue/catalogue.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamLink } from '../upstream/link.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import type { DownstreamSink, LinkEvent, RpcMessage } from '../upstream/sink.js';
import { UpstreamSlot } from '../upstream/slot.js';
import { InputBridge } from './input-bridge.js';
import type { RouteScope } from './router.js';

export interface ScopeOptions {
  registry: UpstreamRegistry;
  /** The servers this endpoint shows, in merge order. */
  servers: readonly string[];
  catalogue: Omit<CatalogueOptions, 'logger'>;
  logger: Logger;
  /** 2026 clients: how long a call suspended for input waits for the client's retry (default 5 min). */
  inputTtlMs?: number;
}

/** A 404 from an HTTP upstream on a request that carried its session id: the session expired. */
function upstreamSessionExpired(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    if (current instanceof SdkHttpError) return current.status === 404;
    current = current.cause;
  }
  return false;
}

interface Held {
  link: UpstreamLink;
  /** Closes this link so the next acquisition reconnects. */
  drop(link: UpstreamLink): Promise<void>;
  release(): void;
}

/**
 * Runs `fn` on a link; if the upstream answered 404 because it forgot our session (restart,
 * expiry), drops that link and runs `fn` once more on a fresh one, transparently.
 */
async function withReinitialise<T>(
  server: string,
  logger: Logger,
  acquire: () => Promise<Held>,
  fn: (link: UpstreamLink) => Promise<T>,
): Promise<T> {
  const first = await acquire();
  try {
    return await fn(first.link);
  } catch (error) {
    if (!upstreamSessionExpired(error)) throw error;
    logger.info({ server }, 'upstream session expired; re-initialising');
    await first.drop(first.link);
  } finally {
    first.release();
  }
  const second = await acquire();
  try {
    return await fn(second.link);
  } finally {
    second.release();
  }
}

export class SessionScope implements RouteScope {
  readonly servers: readonly string[];
  readonly catalogue: Catalogue;
  private readonly registry: UpstreamRegistry;
  private readonly own = new Map<string, UpstreamSlot>();
  private readonly unsubscribes: Array<() => void> = [];
  private readonly subscriptions = new Set<string>();
  private readonly owner: DownstreamSink;
  private readonly logger: Logger;

  /**
   * `shared`: the endpoint's catalogue over the primaries, used when this session has no
   * connection of its own (every server `isolation: "shared"`): the merged view is then the same
   * for every session, so it is built and kept once, not once per session.
   */
  constructor(options: ScopeOptions, owner: DownstreamSink, shared?: Catalogue) {
    this.servers = options.servers;
    this.registry = options.registry;
    this.owner = owner;
    this.logger = options.logger;
    for (const server of options.servers) {
      const entry = options.registry.entry(server);
      const slot =
        entry.config.isolation === 'session'
          ? new UpstreamSlot({ server, logger: options.logger, connect: () => options.registry.connect(server, { owner, era: 'legacy' }) })
          : entry.primary;
      if (slot !== entry.primary) this.own.set(server, slot);
      this.unsubscribes.push(slot.on((event) => this.onLinkEvent(server, event)));
    }
    this.catalogue =
      this.own.size === 0 && shared !== undefined
        ? shared
        : new Catalogue({ servers: this.servers, linkFor: (s) => this.slot(s).get() }, { ...options.catalogue, logger: options.logger });
  }

  /** Starts every own connection in the background, so the first call does not pay for it. */
  warm(): void {
    for (const slot of this.own.values()) slot.get().catch(() => undefined);
  }

  withLink<T>(server: string, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    const slot = this.slot(server);
    return withReinitialise(server, this.logger, async () => ({ link: await slot.get(), drop: (l) => slot.discard(l), release: () => undefined }), fn);
  }

  noteSubscription(server: string, uri: string, subscribed: boolean): void {
    const key = `${server}\n${uri}`;
    if (subscribed) this.subscriptions.add(key);
    else this.subscriptions.delete(key);
  }

  /** Client notifications go to the session's own connections only, never to shared ones. */
  broadcast(message: RpcMessage): void {
    for (const slot of this.own.values()) void slot.current?.notify(message).catch(() => undefined);
  }

  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    await Promise.all([...this.own.values()].map((slot) => slot.close()));
  }

  private slot(server: string): UpstreamSlot {
    return this.own.get(server) ?? this.registry.entry(server).primary;
  }

  private onLinkEvent(server: string, event: LinkEvent): void {
    const notify = (method: string, params?: Record<string, unknown>) =>
      void this.owner.notify(params === undefined ? { method } : { method, params }).catch(() => undefined);
    switch (event.kind) {
      case 'listChanged':
        notify(`notifications/${event.list}/list_changed`);
        return;
      case 'resourceUpdated':
        if (this.subscriptions.has(`${server}\n${String(event.params.uri)}`)) notify('notifications/resources/updated', event.params);
        return;
      case 'closed':
        return;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  }
}

/**
 * The routing scope of 2026-era requests. It is shared by every request of the endpoint; each
 * request routes through `forPrincipal`, the view of the principal that made it, so its leases
 * count against that principal (lease-pool.ts) and only that principal can resume the calls it
 * suspended for input.
 */
export class StatelessScope {
  readonly servers: readonly string[];
  readonly catalogue: Catalogue;
  private readonly inputBridge: InputBridge;
  private readonly registry: UpstreamRegistry;
  private readonly logger: Logger;

  constructor(options: ScopeOptions) {
    this.servers = options.servers;
    this.registry = options.registry;
    this.logger = options.logger;
    this.inputBridge = new InputBridge({ max: 1000, ttlMs: options.inputTtlMs ?? 5 * 60_000 });
    this.catalogue = new Catalogue(
      { servers: this.servers, linkFor: (s) => options.registry.entry(s).primary.get() },
      { ...options.catalogue, logger: options.logger },
    );
  }

  /** The scope as the requests of `principal` (undefined without authentication) see it. */
  forPrincipal(principal: string | undefined): RouteScope {
    return {
      servers: this.servers,
      catalogue: this.catalogue,
      inputBridge: this.inputBridge.for(principal),
      withLink: (server, fn) => this.withLink(server, principal, fn),
    };
  }

  private withLink<T>(server: string, principal: string | undefined, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    return withReinitialise(server, this.logger, async () => {
      const lease = await this.registry.lease(server, principal);
      return { link: lease.link, drop: async () => lease.discard(), release: () => lease.release() };
    }, fn);
  }
}
