/**
 * How a scope holds an upstream connection for one call (session-links.ts, stateless-scope.ts): the
 * primary, a principal's own connection, or a pooled lease — each with the same release and
 * drop — and the one retry when an HTTP upstream forgot the connection's session.
 */
import type { Logger } from '../observability/logger.js';
import type { UpstreamLink } from '../upstream/link.js';
import type { ConnectionKey } from '../upstream/principal-connections.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { acceptsToolTasks } from './tasks/task-capabilities.js';

/** Whether `server`'s upstream takes task-augmented `tools/call`, by what its primary declared. */
export function takesTasksVia(registry: UpstreamRegistry): (server: string) => boolean {
  return (server) => acceptsToolTasks(registry.entries.get(server)?.primary.current?.capabilities);
}

export interface Held {
  link: UpstreamLink;
  /** Closes this link so the next acquisition reconnects. */
  drop(link: UpstreamLink): Promise<void>;
  release(): void;
}

/**
 * Runs `fn` on a link; if the upstream forgot the link's session (an HTTP upstream's 404 after a
 * restart or expiry: the registry asks the upstream kind), drops that link and runs `fn` once
 * more on a fresh one, transparently.
 */
export async function withReinitialise<T>(
  server: string,
  registry: UpstreamRegistry,
  logger: Logger,
  acquire: () => Promise<Held>,
  fn: (link: UpstreamLink) => Promise<T>,
): Promise<T> {
  const first = await acquire();
  try {
    return await fn(first.link);
  } catch (error) {
    if (!registry.sessionLost(server, error)) throw error;
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

/** Holds the server's primary connection (shared: releasing it is a no-op, dropping it reconnects). */
export function primaryHeld(registry: UpstreamRegistry, server: string): () => Promise<Held> {
  const primary = registry.entry(server).primary;
  return async () => ({ link: await primary.get(), drop: (l) => primary.discard(l), release: () => undefined });
}

/** The principal connection of `key` to `server`, held for one call. */
export function principalHeld(registry: UpstreamRegistry, server: string, key: ConnectionKey): () => Promise<Held> {
  return async () => {
    const lease = await registry.principalLease(server, key);
    return { link: lease.link, drop: () => lease.discard(), release: () => lease.release() };
  };
}

/**
 * The link `server`'s lists come from for `key` when it has no primary (principal-bound.ts):
 * `key`'s own principal connection, opened now if needed (and then kept as for a call); without
 * a principal, the primary's refusal saying why.
 */
export async function principalListLink(registry: UpstreamRegistry, server: string, key: ConnectionKey | undefined): Promise<UpstreamLink> {
  const entry = registry.entry(server);
  if (key?.principal === undefined || entry.principals === undefined) return entry.primary.get();
  const lease = await registry.principalLease(server, key);
  lease.release();
  return lease.link;
}

