/**
 * One registry's servers changed at run time (`UpstreamRegistry` in registry.ts delegates here):
 * an operator's global disable, or a reload.
 *
 * - `stop` closes every connection of that server the registry opened — the primary, the pool,
 *   principals' and sessions' own — so its children are reaped, and refuses new ones
 *   (`refuseStopped`) until `start`, which reconnects the primary.
 * - `remove` (a reload dropped the server) stops it for good: no `start` brings it back, and it
 *   leaves the registry's status. Its entry stays, so a session or call still holding its name
 *   is refused as for any stopped server.
 * - `add` (a reload named a new server) builds it as at start (registry-entry.ts) and it joins the
 *   roster, which the endpoints follow; a removed server named again comes back on its old entry.
 * - `restart` replaces a server's connections under a new entry of the same transport and
 *   isolation (server-restart.ts).
 *
 * Changes of one server are applied in order, each after the one before has settled.
 */
import type { ServerConfig } from '../config/schema.js';
import { GatewayError, UpstreamError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { reachedPerPrincipal } from './credentials/principal-bound.js';
import { createLeasePool, type EntrySettings, type ServerEntry } from './registry-entry.js';
import { restartServer, type RestartableEntry } from './server-restart.js';
import type { ServerRoster } from './server-roster.js';

/** What the lifecycle needs of its registry. */
export interface ServerLifecycleHost {
  readonly logger: Logger;
  readonly roster: ServerRoster;
  /** The entry of `name`; throws `UNKNOWN_SERVER` when the registry has none. */
  entry(name: string): ServerEntry;
  /** The entry of `name` if the registry holds one (removed or not). */
  existing(name: string): ServerEntry | undefined;
  /** Builds the entry of a server new to the registry, holds it and tells the registry's listeners, before anything of it connects. */
  create(name: string, config: ServerConfig): ServerEntry;
  /** What entries are built under now. */
  settings(): EntrySettings;
  /** A server stopped (or removed): every connection of it closed; what the registry keeps for it may go (cached credentials). */
  stopped?(name: string): void;
  /** Drops every session's own token for `name` (`perUser`): before a restart's new entry can connect, and on removal. */
  dropUserTokens?(name: string): void;
}

export class ServerLifecycle {
  /** Servers stopped at run time: no connection of theirs may open. */
  private readonly stopped = new Set<string>();
  /** Servers a reload removed: stopped, not in the status, until a later reload names them again (`add`). */
  private readonly removed = new Set<string>();
  /** Per server, the stop or start being applied (each waits for the one before). */
  private readonly transitions = new Map<string, Promise<void>>();

  constructor(private readonly host: ServerLifecycleHost) {}

  /** True while `name` is stopped at run time (`stop`). */
  isStopped(name: string): boolean {
    return this.stopped.has(name);
  }

  /** True once a reload removed `name`. */
  isRemoved(name: string): boolean {
    return this.removed.has(name);
  }

  /** Throws `UPSTREAM_UNAVAILABLE` while `name` is stopped. */
  refuseStopped(name: string): void {
    if (this.stopped.has(name)) throw new UpstreamError('UPSTREAM_UNAVAILABLE', name, 'is stopped');
  }

  /**
   * Restarts one server under a new entry of the same transport and isolation (server-restart.ts):
   * its connections are replaced, the sessions stay and hear `list_changed`. Rejects when the
   * server does not come back (it keeps retrying in the background, shown in state `error`).
   * A stopped server takes the new entry and stays stopped: nothing starts until `start`.
   */
  async restart(name: string, config: ServerConfig): Promise<void> {
    const entry = this.host.entry(name);
    if (config.transport !== entry.config.transport || config.isolation !== entry.config.isolation) {
      throw new GatewayError('NOT_SUPPORTED', `server "${name}": a restart cannot change its transport or isolation`, { server: name });
    }
    if (reachedPerPrincipal(config) !== reachedPerPrincipal(entry.config)) {
      // Whether it has a primary at all is settled when the entry is built (reloads refuse it: config-diff.ts).
      throw new GatewayError('NOT_SUPPORTED', `server "${name}": a restart cannot start or stop its token exchange (upstreamAuth); restart the gateway`, { server: name });
    }
    // A server reached per principal has no primary to reconnect: its principals reconnect on use.
    const noPrimary = this.stopped.has(name) || reachedPerPrincipal(config);
    await this.transition(name, () => {
      // A user gave the token for the upstream as it was; the new configuration may name another URL.
      this.host.dropUserTokens?.(name);
      return restartServer(entry as RestartableEntry, config, (next) => createLeasePool(name, next, this.host.settings()), noPrimary);
    });
  }

  /**
   * Stops one server: every connection of it closes (stdio children are reaped) and none opens
   * until `start`; its primary's state is `closed`. Resolves once all are closed. Idempotent.
   */
  stop(name: string): Promise<void> {
    const entry = this.host.entry(name);
    return this.transition(name, async () => {
      if (this.stopped.has(name)) return;
      this.stopped.add(name);
      this.host.logger.info({ server: name }, 'upstream stopped');
      await Promise.all([
        entry.primary.close(),
        entry.pool?.close(),
        entry.principals?.close(),
        ...entry.changes.live().map((link) => link.close()),
      ]);
      this.host.stopped?.(name);
    });
  }

  /**
   * Starts a stopped server again: resolves once it is `starting` — its primary reconnects in
   * the background (`ready`, or `error` with the usual retries; a failure is logged, not thrown)
   * and sessions reconnect on their next use. No-op unless stopped.
   */
  start(name: string): Promise<void> {
    const entry = this.host.entry(name);
    const { logger } = this.host;
    return this.transition(name, async () => {
      if (this.removed.has(name) || !this.stopped.delete(name)) return;
      entry.pool?.reopen();
      entry.principals?.reopen();
      entry.primary.reopen();
      // No primary to open (principal-bound.ts): each principal's connection opens on its next use.
      if (reachedPerPrincipal(entry.config)) {
        logger.info({ server: name }, 'upstream started; principals connect on use');
        return;
      }
      logger.info({ server: name }, 'upstream starting');
      entry.primary.get().then(
        () => logger.info({ server: name }, 'upstream ready'),
        (error: unknown) =>
          logger.warn({ server: name, reason: error instanceof Error ? error.message : String(error) }, 'upstream started but not reachable yet; retrying in the background'),
      );
    });
  }

  /** Removes one server (a reload dropped it): stopped as `stop` stops it, and no `start` starts it again (only `add`). */
  remove(name: string): Promise<void> {
    this.host.entry(name);
    this.removed.add(name);
    // A server named again later may be another upstream: no session's token for it outlives this.
    this.host.dropUserTokens?.(name);
    return this.stop(name);
  }

  /**
   * Adds one server a reload named and starts its primary, unless `stopped` (the global
   * enablement decisions disable it: nothing starts until `start`). The server joins the roster
   * once the primary's first attempt settled, so the sessions that then hear `list_changed` list
   * it from a live connection. Rejects with the connect error when it did not come up (it keeps
   * retrying in the background, in state `error`); it is in the roster either way. A server
   * removed earlier comes back on its old entry — the one every session still holds — under the
   * new config, which must keep its transport and isolation. Either way the registry's entry
   * finds it as soon as this returns, before the promise settles.
   */
  async add(name: string, config: ServerConfig, stopped: boolean): Promise<void> {
    let entry = this.host.existing(name);
    if (entry !== undefined && !this.removed.has(name)) throw new GatewayError('NOT_SUPPORTED', `server "${name}" is running already`, { server: name });
    if (entry === undefined) {
      entry = this.host.create(name, config);
      if (stopped) await this.stop(name);
    } else {
      await this.restart(name, config); // removed, so stopped: it takes the new entry and stays stopped
      this.removed.delete(name);
      if (!stopped) await this.start(name);
    }
    if (stopped) {
      this.host.roster.add(name);
      return;
    }
    try {
      await entry.primary.get();
    } finally {
      this.host.roster.add(name);
    }
  }

  private transition(name: string, step: () => Promise<void>): Promise<void> {
    const next = (this.transitions.get(name) ?? Promise.resolve()).then(step);
    const settled = next.catch(() => undefined);
    this.transitions.set(name, settled);
    void settled.then(() => {
      if (this.transitions.get(name) === settled) this.transitions.delete(name);
    });
    return next;
  }
}
