/**
 * Resource subscriptions of 2026-07-28 clients. On that revision a client names the resources it
 * wants updates of in its `subscriptions/listen` request (`notifications.resourceSubscriptions`,
 * basic/patterns/subscriptions), and `notifications/resources/updated` for them arrives on that
 * stream only. The gateway subscribes upstream (`resources/subscribe`) to each named URI on the
 * connection of the server that owns it (routed as `resources/read` routes it), and unsubscribes
 * when the last listen naming it ends:
 * - `isolation: "principal"`: the caller's own connection (its principal and workspace, of the
 *   2026 era where the upstream kind speaks it), kept open while a subscription is on it;
 * - otherwise the server's primary connection: pooled connections are leased one call at a time,
 *   so nothing long-lived can stay on them, and the primary serves every caller the same resource.
 *
 * Who hears an update: a listen that named the URI and subscribed on the very connection the
 * update came from. A principal connection's update reaches that principal's listens in that
 * workspace only, never another principal's naming the same URI; a primary's reaches every
 * listen that named it. Matching is exact (the SDK's listen filter is too).
 *
 * A URI is honoured — kept in the listen's acknowledgement — only when its owner is known, the
 * owning connection speaks a revision with `resources/subscribe` (2025-era; a 2026 upstream takes
 * subscriptions on its own listen streams, which the gateway does not open per URI) and declares
 * `resources.subscribe`, and the upstream accepted the subscription. When that connection closes
 * (a child restarted), the subscription is made again on its next link, at most a few times.
 *
 * Bounds: `maxPerListen` URIs in one listen (more is refused, -32602), `maxTotal` URI
 * subscriptions of every live listen together, and `maxPerPrincipal` of them (default half of
 * `maxTotal`) held by one authenticated principal, so one caller cannot take every place (refused
 * with SUBSCRIPTION_LIMIT, retry later; `data.limit` says which bound). Without authentication
 * every caller is the one anonymous principal: the gateway-wide bound alone applies.
 */
import { GatewayError } from '../../errors.js';
import { routeResourceUri } from '../../catalogue/build-index.js';
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { Logger } from '../../observability/logger.js';
import { PrincipalShare } from '../../policy/principal-share.js';
import { REFUSING_SINK } from '../../rpc/sink.js';
import type { UpstreamLink } from '../../upstream/link.js';
import type { LinkEvent } from '../../upstream/link.js';
import { safeReason } from '../../upstream/failure.js';
import { connectionKeyId, type ConnectionKey } from '../../upstream/principal-connections.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { ServerRoster } from '../../upstream/server-roster.js';
import { Grant, type ListenGrant, type Subscription } from './listen-grant.js';
import { DEFAULT_MAX_URIS_PER_LISTEN, DEFAULT_MAX_URIS_TOTAL, subscriptionLimit } from './listen-limits.js';

/** A subscription lost with its connection is made again on the next link at most this often. */
const MAX_RESUBSCRIBES = 3;

export interface ResourceListensOptions {
  registry: UpstreamRegistry;
  /** The endpoint's servers: each one a reload adds is followed too. */
  servers: ServerRoster;
  logger: Logger;
  maxPerListen?: number;
  maxTotal?: number;
  /** URI subscriptions one authenticated principal may hold; default half of `maxTotal` (at least 1). */
  maxPerPrincipal?: number;
}

const subscriptionId = (server: string, uri: string, key: ConnectionKey | undefined) =>
  JSON.stringify([key === undefined ? null : connectionKeyId(key), server, uri]);

/** A connection that takes `resources/subscribe`: a 2025-era one that declared it. */
function subscribable(link: UpstreamLink): boolean {
  return link.era === '2025' && link.capabilities.resources?.subscribe === true;
}

function withoutMeta(params: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _upstreams, ...rest } = params;
  return rest;
}

export class ResourceListens {
  private readonly registry: UpstreamRegistry;
  private readonly logger: Logger;
  private readonly maxPerListen: number;
  private readonly maxTotal: number;
  /** URI subscriptions held or reserved by each authenticated principal. */
  private readonly perPrincipal: PrincipalShare;
  private readonly subscriptions = new Map<string, Subscription>();
  /** Upstream unsubscribes still running, by subscription id: a new subscribe waits for its own. */
  private readonly settling = new Map<string, Promise<void>>();
  private readonly unsubscribes: Array<() => void> = [];
  /** URI subscriptions held or reserved by every live listen together. */
  private total = 0;
  private closed = false;

  constructor(options: ResourceListensOptions) {
    this.registry = options.registry;
    this.logger = options.logger;
    this.maxPerListen = options.maxPerListen ?? DEFAULT_MAX_URIS_PER_LISTEN;
    this.maxTotal = options.maxTotal ?? DEFAULT_MAX_URIS_TOTAL;
    this.perPrincipal = new PrincipalShare(options.maxPerPrincipal ?? Math.max(1, Math.floor(this.maxTotal / 2)));
    for (const server of options.servers.names) this.follow(server);
    this.unsubscribes.push(options.servers.onAdded((server) => this.follow(server)));
  }

  /** Hears the updates of one server's primary and principal connections. */
  private follow(server: string): void {
    const entry = this.registry.entry(server);
    this.unsubscribes.push(entry.primary.on((event) => this.onEvent(server, undefined, event)));
    const principals = entry.principals;
    if (principals !== undefined) this.unsubscribes.push(principals.on((key, event) => this.onEvent(server, key, event)));
  }

  /** URI subscriptions held by live listens right now (with those being set up). */
  get size(): number {
    return this.total;
  }

  /**
   * Subscribes for one listen of `key` (its principal and workspace) to `requested`, owners found
   * in `catalogue` (the caller's view). Resolves once every upstream subscription is settled;
   * rejects with a `GatewayError` past a bound.
   */
  async open(key: ConnectionKey, catalogue: Catalogue, requested: readonly string[]): Promise<ListenGrant> {
    const uris = [...new Set(requested)];
    if (uris.length > this.maxPerListen) {
      throw new GatewayError('INVALID_PARAMS', `subscriptions/listen names ${uris.length} resources; at most ${this.maxPerListen} per listen`);
    }
    if (this.closed) throw new GatewayError('SHUTTING_DOWN', 'gateway is shutting down');
    const principal = key.principal;
    if (!this.perPrincipal.fits(principal, uris.length)) {
      throw subscriptionLimit('principal', 'resourceSubscriptions', this.perPrincipal.max);
    }
    if (this.total + uris.length > this.maxTotal) throw subscriptionLimit('gateway', 'resourceSubscriptions', this.maxTotal);
    this.count(principal, uris.length); // reserved now, so concurrent listens cannot overshoot together
    const grant = new Grant(principal, (g) => this.release(g));
    let reserved = true;
    try {
      const [resources, templates] = await Promise.all([catalogue.resources(), catalogue.templates()]);
      const wanted: Array<{ uri: string; subscription: Subscription }> = [];
      for (const uri of uris) {
        const server = routeResourceUri(uri, resources.index, templates.routes);
        if (server === undefined) continue;
        // A principal server's subscription is on the caller's 2026 connection, as its calls are.
        const entry = this.registry.entry(server);
        const on = entry.principals === undefined ? undefined : entry.policy.principalKey({ era: '2026', key });
        const subscription = this.hold(server, uri, on, grant);
        wanted.push({ uri, subscription });
      }
      // What no one holds goes back now; a subscription dropped below gives its own place back.
      this.count(principal, -(uris.length - grant.held.length));
      reserved = false;
      const settled = await Promise.all(wanted.map((w) => w.subscription.ready));
      const honoured: string[] = [];
      wanted.forEach((w, i) => {
        if (settled[i] === true) honoured.push(w.uri);
        else this.drop(grant, w.subscription);
      });
      grant.uris = honoured;
      return grant;
    } catch (error) {
      if (reserved) this.count(principal, -(uris.length - grant.held.length));
      grant.release();
      throw error;
    }
  }

  /** URI subscriptions `principal` holds or has reserved right now. */
  heldBy(principal: string): number {
    return this.perPrincipal.of(principal);
  }

  /** `delta` places taken (or given back) by `principal`, in its share and the gateway's total. */
  private count(principal: string | undefined, delta: number): void {
    this.total += delta;
    this.perPrincipal.add(principal, delta);
  }

  close(): void {
    this.closed = true;
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
  }

  /** `grant` holds the subscription of `uri` on that connection, made upstream by the first holder. */
  private hold(server: string, uri: string, key: ConnectionKey | undefined, grant: Grant): Subscription {
    const id = subscriptionId(server, uri, key);
    let subscription = this.subscriptions.get(id);
    if (subscription === undefined) {
      const previous = this.settling.get(id) ?? Promise.resolve();
      subscription = { id, server, uri, key, grants: new Set(), ready: previous.then(() => this.subscribeUpstream(server, uri, key)), resubscribes: 0 };
      this.subscriptions.set(id, subscription);
    }
    subscription.grants.add(grant);
    grant.held.push(subscription);
    return subscription;
  }

  private release(grant: Grant): void {
    for (const subscription of [...grant.held]) this.drop(grant, subscription);
  }

  /** `grant` no longer holds `subscription`; the last holder's going unsubscribes upstream. */
  private drop(grant: Grant, subscription: Subscription): void {
    const at = grant.held.indexOf(subscription);
    if (at < 0) return;
    grant.held.splice(at, 1);
    this.count(grant.principal, -1);
    subscription.grants.delete(grant);
    if (subscription.grants.size > 0 || this.subscriptions.get(subscription.id) !== subscription) return;
    this.subscriptions.delete(subscription.id);
    const { id, server, uri, key } = subscription;
    const done = subscription.ready.then((subscribed) => (subscribed ? this.unsubscribeUpstream(server, uri, key) : undefined));
    this.settling.set(id, done);
    void done.finally(() => {
      if (this.settling.get(id) === done) this.settling.delete(id);
    });
  }

  private async subscribeUpstream(server: string, uri: string, key: ConnectionKey | undefined): Promise<boolean> {
    if (this.closed) return false;
    try {
      if (key === undefined) {
        const link = await this.registry.entry(server).primary.get();
        if (!subscribable(link)) return false;
        await link.request('resources/subscribe', { uri }, { sink: REFUSING_SINK });
        return true;
      }
      // Only principal servers subscribe per key (`open`): the policy gives the principal's connection.
      const lease = await this.registry.entry(server).policy.acquire({ era: '2026', key });
      try {
        if (!subscribable(lease.link)) return false;
        await lease.link.request('resources/subscribe', { uri }, { sink: REFUSING_SINK });
        // Counted while the lease still holds the connection: it stays open for the subscription.
        this.registry.entry(server).principals?.noteSubscription(key, true);
        return true;
      } finally {
        lease.release();
      }
    } catch (error) {
      this.logger.debug({ server, reason: safeReason(error) }, 'upstream resources/subscribe for a listen failed');
      return false;
    }
  }

  private async unsubscribeUpstream(server: string, uri: string, key: ConnectionKey | undefined): Promise<void> {
    const entry = this.registry.entry(server);
    // Never opens a connection to unsubscribe: one that closed took its subscriptions with it.
    const link = key === undefined ? entry.primary.current : entry.principals?.current(key);
    try {
      if (link !== undefined && !link.closed) await link.request('resources/unsubscribe', { uri }, { sink: REFUSING_SINK });
    } catch (error) {
      this.logger.debug({ server, reason: safeReason(error) }, 'upstream resources/unsubscribe for a listen failed');
    } finally {
      if (key !== undefined) entry.principals?.noteSubscription(key, false);
    }
  }

  private onEvent(server: string, key: ConnectionKey | undefined, event: LinkEvent): void {
    if (event.kind === 'resourceUpdated') {
      const uri = event.params.uri;
      if (typeof uri !== 'string') return;
      const subscription = this.subscriptions.get(subscriptionId(server, uri, key));
      if (subscription === undefined) return;
      const params = withoutMeta(event.params);
      for (const grant of subscription.grants) grant.deliver?.(uri, params);
      return;
    }
    if (event.kind === 'closed' && !this.closed) this.resubscribe(server, key);
  }

  /** The connection of `key` (or the primary) closed: its subscriptions are made again on the next link. */
  private resubscribe(server: string, key: ConnectionKey | undefined): void {
    const keyId = key === undefined ? undefined : connectionKeyId(key);
    for (const subscription of this.subscriptions.values()) {
      if (subscription.server !== server) continue;
      if ((subscription.key === undefined ? undefined : connectionKeyId(subscription.key)) !== keyId) continue;
      if (subscription.resubscribes >= MAX_RESUBSCRIBES) continue;
      subscription.resubscribes += 1;
      const { uri } = subscription;
      // A principal connection counted this subscription; its holder outlives the link, so the count is given back first.
      subscription.ready = subscription.ready.then((was) => {
        if (was && key !== undefined) this.registry.entry(server).principals?.noteSubscription(key, false);
        return this.subscriptions.get(subscription.id) === subscription ? this.subscribeUpstream(server, uri, key) : false;
      });
    }
  }
}
