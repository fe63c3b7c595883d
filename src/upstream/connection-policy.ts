/**
 * Which connection of one server serves a caller, decided here and nowhere else: from the
 * server's `isolation`, its credential reach (registry-entry.ts, `Reach`) and the caller's era
 * (docs/architecture.md, "The connection policy"). Scopes ask `acquire` / `run` / `listLink`
 * with who is asking; they never read the entry's isolation or pick among its connections.
 *
 * | reach        | isolation   | 2025 session's call    | 2026 request's call          |
 * |--------------|-------------|------------------------|------------------------------|
 * | primary      | `shared`    | the primary            | the primary                  |
 * | primary      | `principal` | its principal's 2025   | its principal's 2026 (2025 where the kind speaks only that) |
 * | primary      | `session`   | the session's own      | a pooled lease               |
 * | perPrincipal | `principal` | its principal's 2025   | its principal's 2026         |
 * | perUser      | `session`   | the session's own (its token) | refused: needs a session |
 *
 * A principal's connection is one per era (`principalKey`, `connectionEra`), so a 2026 request is
 * bridged to a 2026 upstream as 2026 (its `Mcp-Param-*` headers, its listens) and a 2025 session
 * keeps the 2025 revision's subscriptions and log levels; a stdio or HTTP+SSE server speaks 2025
 * to both, so both eras share the one connection there.
 * A 2026 call that may create a task runs on the primary (the task outlives the call, and no
 * idle reaping or lease hands the primary to anyone else). Every answer is one shape, a
 * `HeldConnection`: the link, `release` when the call is over, `drop` when the link is broken.
 * `run` adds the one retry when an HTTP upstream forgot the connection's session.
 */
import type { Logger } from '../observability/logger.js';
import type { Era } from '../rpc/era.js';
import { connectionEra, upstreamSessionLost } from './connector.js';
import { sessionNeeded } from './credentials/user-tokens.js';
import type { LinkEvent, UpstreamLink } from './link.js';
import { connectionKeyId, type ConnectionKey } from './principal-connections.js';
import type { ServerEntry } from './registry-entry.js';


/** A connection held for one call, whichever kind it is. */
export interface HeldConnection {
  readonly link: UpstreamLink;
  /** The call is over; the connection may serve others (idempotent). */
  release(): void;
  /** The link is broken: it is closed, so the next acquisition opens a fresh one. */
  drop(): Promise<void>;
}

/** A 2025 session's own connection to one server (the session opened it, or opens it on first use). */
export interface OwnConnection {
  /** The live link, if the session has one to this server now. */
  readonly current: UpstreamLink | undefined;
  acquire(): Promise<HeldConnection>;
}

/** Who asks for a connection. */
export interface Caller {
  readonly era: Era;
  /** The authenticated principal (undefined without auth) and the workspace the caller named. */
  readonly key: ConnectionKey;
  /** The session's own connection to this server, for a 2025 session of a `session` server. */
  readonly own?: OwnConnection | undefined;
  /** A 2026 call that may create a task upstream. */
  readonly task?: boolean;
}

/** What of its server's entry the policy reads (live: a restart replaces config, reach and pool in place). */
type PolicyEntry = Pick<ServerEntry, 'name' | 'config' | 'reach' | 'primary' | 'pool' | 'principals'>;

/** Which connection serves a call. */
export type Route = 'primary' | 'principal' | 'pool' | 'own' | 'sessionOnly';

/** The policy as a table: `route` of a call from what the config settled (see the header). */
export function routeOf(entry: Pick<ServerEntry, 'config' | 'reach'>, caller: Pick<Caller, 'era' | 'task'>): Route {
  if (entry.reach === 'perUser') return caller.era === '2025' ? 'own' : 'sessionOnly';
  if (caller.era === '2026' && caller.task === true) return 'primary';
  switch (entry.config.isolation) {
    case 'shared':
      return 'primary';
    case 'principal':
      return 'principal';
    case 'session':
      return caller.era === '2025' ? 'own' : 'pool';
    default:
      return exhausted(entry.config.isolation);
  }
}

function exhausted(value: never): never {
  throw new TypeError(`unknown isolation ${String(value)}`);
}

/**
 * The connection policy of one server. It reads its entry when asked (a restart replaces the
 * entry's config and pool in place), so it is built once per entry and never rebuilt.
 */
export class ConnectionPolicy {
  private readonly entry: PolicyEntry;
  private readonly logger: Logger;

  constructor(entry: PolicyEntry, logger: Logger) {
    this.entry = entry;
    this.logger = logger;
  }

  get server(): string {
    return this.entry.name;
  }

  /** Which connection serves `caller`'s calls. */
  route(caller: Pick<Caller, 'era' | 'task'>): Route {
    return routeOf(this.entry, caller);
  }

  /** True when a 2025 session of this server has a connection of its own (isolation `session`, or per-user credentials). */
  get ownPerSession(): boolean {
    return this.route({ era: '2025' }) === 'own';
  }

  /** True when callers' lists of this server come from their principal's connection (never another principal's). */
  get listsPerPrincipal(): boolean {
    return this.entry.config.isolation === 'principal';
  }

  /** The key `caller`'s principal connection is held under: its principal, workspace and the era that connection speaks. */
  principalKey(caller: Pick<Caller, 'era' | 'key'>): ConnectionKey {
    const { principal, workspace } = caller.key;
    return { principal, workspace, era: connectionEra(this.entry.config, caller.era) };
  }

  /** The open link of `caller`'s principal connection, without opening one; undefined for a server without them. */
  principalLink(caller: Pick<Caller, 'era' | 'key'>): UpstreamLink | undefined {
    return this.entry.principals?.current(this.principalKey(caller));
  }

  /** A resource subscription held on `caller`'s principal connection began or ended: while one is, the connection is not closed for idleness. */
  noteSubscription(caller: Pick<Caller, 'era' | 'key'>, subscribed: boolean): void {
    this.entry.principals?.noteSubscription(this.principalKey(caller), subscribed);
  }

  /**
   * Follows what `caller` hears of this server, as its lists are served (`listLink`): its
   * principal connection's events, and the primary's list changes while that connection is not
   * open; every event of the primary for a caller served by it; for a caller with a connection of
   * its own, the primary's list changes while that one is not open (its own connection's events
   * are the caller's to follow). Returns the unsubscribe.
   */
  follow(caller: Caller, onEvent: (event: LinkEvent) => void): () => void {
    const { primary, principals } = this.entry;
    const route = this.route(caller);
    switch (route) {
      case 'primary':
      case 'pool':
        return primary.on(onEvent);
      case 'principal': {
        if (principals === undefined) throw new TypeError(`server "${this.entry.name}" has no principal connections`);
        const key = this.principalKey(caller);
        const id = connectionKeyId(key);
        const offPrincipal = principals.on((of, event) => {
          if (connectionKeyId(of) === id) onEvent(event);
        });
        const offPrimary = primary.on((event) => {
          if (event.kind === 'listChanged' && principals.current(key) === undefined) onEvent(event);
        });
        return () => {
          offPrincipal();
          offPrimary();
        };
      }
      case 'own':
        return primary.on((event) => {
          if (event.kind === 'listChanged' && caller.own?.current === undefined) onEvent(event);
        });
      case 'sessionOnly':
        return () => undefined;
      default:
        return exhausted(route);
    }
  }

  /** The connection for one call of `caller`. */
  acquire(caller: Caller): Promise<HeldConnection> {
    const { entry } = this;
    const route = this.route(caller);
    switch (route) {
      case 'primary':
        return this.primary();
      case 'principal':
        return this.principal(this.principalKey(caller));
      case 'pool': {
        // Every `session` server has a pool (registry-entry.ts); a restart swaps it in place.
        const pool = entry.pool;
        if (pool === undefined) return Promise.reject(new TypeError(`server "${entry.name}" has no lease pool`));
        return pool.acquire(caller.key.principal);
      }
      case 'own':
        if (caller.own === undefined) return Promise.reject(new TypeError(`server "${entry.name}": a 2025 session's own connection was not given`));
        return caller.own.acquire();
      case 'sessionOnly':
        return Promise.reject(sessionNeeded(entry.name));
      default:
        return exhausted(route);
    }
  }

  /**
   * Runs `fn` on the connection `caller` gets; if the upstream forgot the link's session (an
   * HTTP upstream's 404 after a restart or expiry: the upstream kind decides), drops that link
   * and runs `fn` once more on a fresh one, transparently.
   */
  async run<T>(caller: Caller, fn: (link: UpstreamLink) => Promise<T>): Promise<T> {
    const first = await this.acquire(caller);
    try {
      return await fn(first.link);
    } catch (error) {
      if (!upstreamSessionLost(this.entry.config, error)) throw error;
      this.logger.info({ server: this.entry.name }, 'upstream session expired; re-initialising');
      await first.drop();
    } finally {
      first.release();
    }
    const second = await this.acquire(caller);
    try {
      return await fn(second.link);
    } finally {
      second.release();
    }
  }

  /**
   * The link `caller`'s lists of this server come from: the session's own once open, its
   * principal's once open, else the primary. A server with no primary (reached per principal)
   * lists from the caller's principal connection, opened for it; without a principal, the
   * primary's refusal says why. A per-user server lists for 2025 sessions from their own
   * connection only (the session's credentials decide, session-credentials.ts) and for 2026
   * requests not at all.
   */
  async listLink(caller: Caller): Promise<UpstreamLink> {
    const { entry } = this;
    if (entry.reach === 'perUser' && caller.era === '2026') throw sessionNeeded(entry.name);
    const key = this.principalKey(caller);
    const open = caller.own?.current ?? entry.principals?.current(key);
    if (open !== undefined) return open;
    if (entry.reach === 'perPrincipal' && key.principal !== undefined && entry.principals !== undefined) {
      const held = await entry.principals.acquire(key);
      held.release();
      return held.link;
    }
    return entry.primary.get();
  }

  /** The primary, held for one call (shared: releasing it is a no-op, dropping it reconnects). */
  private async primary(): Promise<HeldConnection> {
    const primary = this.entry.primary;
    const link = await primary.get();
    return { link, release: () => undefined, drop: () => primary.discard(link) };
  }

  private principal(key: ConnectionKey): Promise<HeldConnection> {
    // Every `principal` server has its principal connections (registry-entry.ts): never the primary instead.
    const principals = this.entry.principals;
    if (principals === undefined) return Promise.reject(new TypeError(`server "${this.entry.name}" has no principal connections`));
    return principals.acquire(key);
  }
}
