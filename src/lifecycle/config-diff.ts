/**
 * What a reload changes (docs/operations.md, "Hot reload"): a pure comparison of the running
 * configuration with a newly loaded one. What can be applied to a running gateway without
 * dropping a session or a stream is sorted out — servers to add, servers to remove, servers to
 * restart, servers whose tool filters moved, the policy's denied tools, the inbound body limits —
 * and everything else is named as needing a restart, field by field (never a value: config files
 * hold secrets).
 */
import type { GatewayConfig, ServerConfig } from '../config/schema.js';

export interface ConfigDiff {
  /** Servers the new configuration names for the first time (or again, after a reload removed them): started and listed. */
  readonly add: readonly string[];
  /** Servers the new configuration no longer names: stopped and withdrawn from every list. */
  readonly remove: readonly string[];
  /** Servers whose entry changed beyond its tool filters: their connections are replaced. */
  readonly restart: readonly string[];
  /** Servers whose `enabledTools` / `disabledTools` alone changed: their lists are re-filtered. */
  readonly refilter: readonly string[];
  /** The policy's `deniedTools` changed: every server's lists are re-filtered. */
  readonly deniedTools: boolean;
  /** `limits.maxBodyBytes` or `limits.maxJsonDepth` changed. */
  readonly bodyLimits: boolean;
  /** Changes a running gateway cannot take, each naming the field: the reload is refused whole. */
  readonly needsRestart: readonly string[];
}

/**
 * Top-level keys a running gateway can take a change of (servers and their filters, the policy's
 * denied tools, the body limits: compared one by one below). Every other key — the listener,
 * auth, sessions, stores, cluster, plugins, tasks, lifecycle, admin, and any key added later — is
 * wired in when the gateway starts, so a change of it needs a restart.
 */
const COMPARED_BELOW: ReadonlySet<string> = new Set(['servers', 'policy', 'limits', 'configFile']);

/**
 * Server fields a restart cannot change: they decide which connections exist at all, or (for
 * `enabled`) are the enablement default read once at start — a running gateway changes that
 * through a global toggle (`POST <path>/customizations/toggle`), never by restarting the server.
 */
const SERVER_SHAPE = ['transport', 'isolation', 'enabled'] as const;

/** What a server named again after a reload removed it keeps: its slot's connections were built for them. */
const RETIRED_SHAPE = ['transport', 'isolation'] as const;

const FILTER_FIELDS = new Set(['enabledTools', 'disabledTools']);

function upstreamAuthOf(server: ServerConfig): unknown {
  return server.transport === 'stdio' ? undefined : server.upstreamAuth;
}

/** The per-user credential mode of a server entry, if it has one (`tokenExchange`, `perUser`). */
function perUserKind(server: ServerConfig): 'tokenExchange' | 'perUser' | undefined {
  const kind = server.transport === 'stdio' ? undefined : server.upstreamAuth?.kind;
  return kind === 'tokenExchange' || kind === 'perUser' ? kind : undefined;
}

/** Structural equality of parsed config values (plain JSON data: objects, arrays, primitives). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const keysB = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

function withoutFilters(server: ServerConfig): Record<string, unknown> {
  return Object.fromEntries(Object.entries(server).filter(([key]) => !FILTER_FIELDS.has(key)));
}

function sameFilters(a: ServerConfig, b: ServerConfig): boolean {
  return sameValue(a.enabledTools, b.enabledTools) && sameValue(a.disabledTools, b.disabledTools);
}

/**
 * Compares the running servers and config with the new ones. `servers` are the servers that run
 * (the config's and its plugins'). A server can be added to a running gateway and withdrawn from
 * it. `retired` holds the last entry of each server an earlier reload removed: the gateway keeps
 * its slot, so one named again comes back on it and must keep its transport and isolation.
 */
export function diffConfigs(
  running: Readonly<GatewayConfig>,
  next: Readonly<GatewayConfig>,
  runningServers: Readonly<Record<string, ServerConfig>> = running.servers,
  nextServers: Readonly<Record<string, ServerConfig>> = next.servers,
  retired: ReadonlyMap<string, ServerConfig> = new Map(),
): ConfigDiff {
  const needsRestart: string[] = [];
  const keys = [...new Set([...Object.keys(running), ...Object.keys(next)])].filter((key) => !COMPARED_BELOW.has(key));
  for (const key of keys) {
    const a = (running as Record<string, unknown>)[key];
    const b = (next as Record<string, unknown>)[key];
    if (!sameValue(a, b)) needsRestart.push(`${key}: changed; this setting applies when the gateway starts`);
  }
  for (const key of ['maxHeaderBytes', 'maxUpstreamMessageBytes'] as const) {
    if (running.limits[key] !== next.limits[key]) needsRestart.push(`limits.${key}: changed; this limit applies when the gateway starts`);
  }
  const { deniedTools: runningDenied, ...runningPolicy } = running.policy;
  const { deniedTools: nextDenied, ...nextPolicy } = next.policy;
  for (const key of new Set([...Object.keys(runningPolicy), ...Object.keys(nextPolicy)])) {
    const a = (runningPolicy as Record<string, unknown>)[key];
    const b = (nextPolicy as Record<string, unknown>)[key];
    if (!sameValue(a, b)) needsRestart.push(`policy.${key}: changed; only policy.deniedTools applies to a running gateway`);
  }

  const add: string[] = [];
  const remove: string[] = [];
  const restart: string[] = [];
  const refilter: string[] = [];
  const names = [...new Set([...Object.keys(runningServers), ...Object.keys(nextServers)])].sort();
  for (const name of names) {
    const before = runningServers[name];
    const after = nextServers[name];
    if (before === undefined) {
      const earlier = retired.get(name);
      const moved = earlier === undefined ? [] : RETIRED_SHAPE.filter((field) => earlier[field] !== after![field]);
      for (const field of moved) needsRestart.push(`servers.${name}.${field}: differs from the server of that name a reload removed; naming it again with another ${field} needs a restart`);
      // Per-user credentials are wired when the gateway starts: the inbound token store exists only
      // if a server exchanges tokens, and a session attaches its token store over the servers it
      // opens with (upstream/credentials/, routing/scopes/session-credentials.ts).
      const kind = perUserKind(after!);
      if (kind !== undefined) {
        needsRestart.push(`servers.${name}.upstreamAuth: a server with ${kind} credentials is wired in when the gateway starts; adding one needs a restart`);
        continue;
      }
      // A removed server comes back on its old entry, which every session and scope sorted by its
      // credentials when it was built (no primary, a session's token store): those stay as they were.
      const earlierKind = earlier === undefined ? undefined : perUserKind(earlier);
      if (earlierKind !== undefined) {
        needsRestart.push(`servers.${name}.upstreamAuth: the server of that name a reload removed had ${earlierKind} credentials; naming it again needs a restart`);
        continue;
      }
      if (moved.length === 0) add.push(name);
      continue;
    }
    if (after === undefined) {
      remove.push(name);
      continue;
    }
    const shape: string[] = SERVER_SHAPE.filter((field) => before[field] !== after[field]);
    // Whether the server has a primary at all depends on `upstreamAuth` (principal-bound.ts). Its
    // token source follows a restart that moves `url` (rebuilt, upstream-credentials.ts).
    if (!sameValue(upstreamAuthOf(before), upstreamAuthOf(after))) shape.push('upstreamAuth');
    for (const field of shape) needsRestart.push(`servers.${name}.${field}: changed; this needs a restart`);
    if (shape.length > 0) continue;
    if (!sameValue(withoutFilters(before), withoutFilters(after))) restart.push(name);
    else if (!sameFilters(before, after)) refilter.push(name);
  }
  return {
    add,
    remove,
    restart,
    refilter,
    deniedTools: !sameValue(runningDenied, nextDenied),
    bodyLimits: running.limits.maxBodyBytes !== next.limits.maxBodyBytes || running.limits.maxJsonDepth !== next.limits.maxJsonDepth,
    needsRestart,
  };
}

/** True when the diff changes nothing. */
export function isEmptyDiff(diff: ConfigDiff): boolean {
  return diff.add.length === 0 && diff.remove.length === 0 && diff.restart.length === 0 && diff.refilter.length === 0 && !diff.deniedTools && !diff.bodyLimits && diff.needsRestart.length === 0;
}
