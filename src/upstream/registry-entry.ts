/**
 * One server's entry in the upstream registry (registry.ts), built the same way for a server the
 * gateway starts with and for one a reload adds: the eager primary connection, for
 * `isolation: "session"` the bounded lease pool of sessionless connections (and, for stdio, the
 * places for sessions' own children), for `isolation: "principal"` the per-principal connections,
 * and the feed of list changes heard on any of them. Nothing connects on construction; a starting
 * registry connects every primary through `startPrimaries`. A server reached per principal
 * (`tokenExchange`, principal-bound.ts) has no primary; a per-user one (`perUser`) has one that
 * carries no user's token and is up when the upstream answers it by asking for authorization.
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/schema.js';
import type { DownstreamSink } from '../rpc/sink.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { ChildQuota } from './child-quota.js';
import { ConnectionPolicy } from './connection-policy.js';
import { LeasePool } from './lease-pool.js';
import type { UpstreamLink } from './link.js';
import { PrincipalConnections } from './principal-connections.js';
import { ServerChanges } from './server-changes.js';
import { UpstreamSlot, type SlotState } from './slot.js';
import { authRequiredIn } from './auth-required.js';
import { noPrimaryConnection, reachedPerPrincipal } from './credentials/principal-bound.js';
import { takesUserTokens } from './credentials/user-tokens.js';
import type { CredentialOwner } from './credentials/credential-owner.js';

/**
 * How a server is reached, settled from its credentials once per configuration: through its
 * primary; per principal (`tokenExchange`: no primary at all); or with each user's token
 * (`perUser`: the primary carries none, so it is refused like a user without one).
 */
export type Reach = 'primary' | 'perPrincipal' | 'perUser';

export function reachOf(config: ServerConfig): Reach {
  if (reachedPerPrincipal(config)) return 'perPrincipal';
  return takesUserTokens(config) ? 'perUser' : 'primary';
}

export interface ServerEntry {
  readonly name: string;
  readonly config: ServerConfig;
  readonly reach: Reach;
  readonly primary: UpstreamSlot;
  readonly pool: LeasePool | undefined;
  /** Places for sessions' own child processes (stdio, `isolation: "session"`); undefined otherwise. */
  readonly sessionChildren: ChildQuota | undefined;
  /** One connection per principal, workspace and era (`isolation: "principal"`); undefined otherwise. */
  readonly principals: PrincipalConnections | undefined;
  /** List changes heard on any connection of the server. */
  readonly changes: ServerChanges;
  /** Which of these connections serves a caller (connection-policy.ts): the one place that decides. */
  readonly policy: ConnectionPolicy;
}

/** How one connection of a server opens (`UpstreamRegistry.connect`). */
export interface ConnectOptions {
  /** Receives what no call can be credited with (a 2025 session's standalone stream). */
  owner?: DownstreamSink;
  /** `'2025'`: prefer the 2025 revision (a 2025 session's own connection). */
  era?: '2025' | 'any';
  /**
   * What arrives while one call's request is the only one open is that call's: a pooled lease
   * (one call at a time), or a principal's own connection (every call on it is that principal's).
   */
  exclusive?: boolean;
  /**
   * The capabilities to declare: a session's own connection passes its client's. Absent: what
   * the gateway can honour on a connection no client owns (pooled or shared; client-capabilities.ts).
   */
  clientCapabilities?: ClientCapabilities;
  /** The principal or session this connection is bound to, for per-user upstream credentials. */
  credentialOwner?: CredentialOwner;
}

/** The registry's settings an entry is built under, and how its connections open. */
export interface EntrySettings {
  readonly statelessPool: {
    readonly maxPerServer: number;
    readonly idleTimeoutMs: number;
    readonly maxWaitMs: number;
    /** Absent: half the pool, at least 1. */
    readonly maxPerPrincipal?: number | undefined;
    readonly cancelGraceMs: number;
  };
  readonly maxSessionChildren: number;
  readonly childIdleTimeoutMs: number;
  readonly onLeaseWait?: ((server: string) => void) | undefined;
  readonly logger: Logger;
  /** Opens one connection of `server` through the registry (it checks the server is not stopped). */
  connect(server: string, options?: ConnectOptions): Promise<UpstreamLink>;
}

/** The bounded pool of sessionless connections of an `isolation: "session"` server. */
export function createLeasePool(name: string, config: ServerConfig, settings: EntrySettings): LeasePool | undefined {
  if (config.isolation !== 'session') return undefined;
  const pool = settings.statelessPool;
  const onLeaseWait = settings.onLeaseWait;
  return new LeasePool({
    server: name,
    max: pool.maxPerServer,
    idleTimeoutMs: pool.idleTimeoutMs,
    maxWaitMs: pool.maxWaitMs,
    maxPerPrincipal: pool.maxPerPrincipal ?? Math.max(1, Math.ceil(pool.maxPerServer / 2)),
    cancelGraceMs: pool.cancelGraceMs,
    logger: settings.logger,
    ...(onLeaseWait === undefined ? {} : { onWait: () => onLeaseWait(name) }),
    createSlot: () => new UpstreamSlot({ server: name, logger: settings.logger, connect: () => settings.connect(name, { exclusive: true }) }),
  });
}

export function createServerEntry(name: string, config: ServerConfig, settings: EntrySettings): ServerEntry {
  const { logger, maxSessionChildren } = settings;
  // A server reached per principal has no primary: asking it answers why (principal-bound.ts).
  const reach = reachOf(config);
  const perPrincipal = reach === 'perPrincipal';
  const primary = new UpstreamSlot({
    server: name,
    eager: !perPrincipal,
    logger,
    connect: perPrincipal ? () => Promise.reject(noPrimaryConnection(name)) : () => settings.connect(name),
  });
  const sessionChildren = config.isolation === 'session' && config.transport === 'stdio' ? new ChildQuota(name, maxSessionChildren, logger) : undefined;
  const principals =
    config.isolation === 'principal'
      ? new PrincipalConnections({
          server: name,
          max: maxSessionChildren,
          maxPerPrincipal: Math.max(1, Math.ceil(maxSessionChildren / 2)),
          idleTimeoutMs: settings.childIdleTimeoutMs,
          // The key's era (connection-policy.ts settles it): a 2025-era connection asks for the
          // 2025 revision where offered, a 2026-era one negotiates as the primary does.
          connect: (key) =>
            settings.connect(name, {
              era: (key.era ?? '2025') === '2025' ? '2025' : 'any',
              exclusive: true,
              credentialOwner: { kind: 'principal', principal: key.principal },
            }),
          logger,
        })
      : undefined;
  const parts = { name, config, reach, primary, pool: createLeasePool(name, config, settings), sessionChildren, principals, changes: new ServerChanges() };
  // The policy reads the entry itself when asked: a restart replaces its config and pool in place.
  return Object.assign(parts, { policy: new ConnectionPolicy(parts, logger) });
}

/**
 * Connects the primaries of `entries` (a starting registry's). Required servers that fail make
 * this reject, naming them (never their command or URL); optional ones are logged and keep
 * retrying in the background.
 */
export async function startPrimaries(entries: readonly ServerEntry[], logger: Logger): Promise<void> {
  const results = await Promise.all(
    entries.map(async (entry) => {
      if (entry.reach === 'perPrincipal') return undefined; // no primary: principals connect on use
      try {
        const link = await entry.primary.get();
        logger.info({ server: entry.name }, 'upstream ready');
        // The first client's first `tools/list` needs this list: asked now, it is read while the
        // gateway finishes starting and the client initialises (a child's first answer is its
        // slowest). Kept by the link's list cache; a failure is the first list's to report.
        void link.list('tools').catch(() => undefined);
        return undefined;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        if (asksEachUser(entry)) {
          logger.info({ server: entry.name }, 'upstream asks each user for their own credential');
          return undefined;
        }
        if (entry.config.mode === 'optional') {
          logger.warn({ server: entry.name, reason }, 'optional upstream failed to start; retrying in the background');
          return undefined;
        }
        return `${entry.name}: ${reason}`;
      }
    }),
  );
  const failed = results.filter((r): r is string => r !== undefined);
  if (failed.length > 0) {
    throw new GatewayError('UPSTREAM_START_FAILED', `required upstream servers failed to start:\n  - ${failed.join('\n  - ')}`);
  }
}

/**
 * A server's state as every surface reports it (`/readyz`, metrics, the admin page, the
 * customisation list): its primary's, except that a server reached per principal has none to
 * judge by (`ready` unless stopped: each caller's connection opens on use), and a per-user server
 * whose token-less primary meets an authorization challenge (failed, or retrying after one) is
 * `authRequired` — up, asking each user for their own credential.
 */
export type EffectiveState = SlotState | 'authRequired';

export function effectiveState(entry: ServerEntry): EffectiveState {
  const state = entry.primary.state;
  switch (entry.reach) {
    case 'perPrincipal':
      return state === 'closed' ? 'closed' : 'ready';
    case 'perUser':
      return (state === 'error' || state === 'connecting') && authRequiredIn(entry.primary.lastError) !== undefined ? 'authRequired' : state;
    case 'primary':
      return state;
    default: {
      const unreachable: never = entry.reach;
      throw new TypeError(`unknown reach ${String(unreachable)}`);
    }
  }
}

/** A per-user server whose primary (no user's token) was answered with an authorization challenge: it is up. */
export function asksEachUser(entry: ServerEntry): boolean {
  return entry.reach === 'perUser' && entry.primary.state === 'error' && authRequiredIn(entry.primary.lastError) !== undefined;
}
