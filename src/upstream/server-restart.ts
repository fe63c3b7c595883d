/**
 * Restarting one server of a running registry with a new entry (a reload changed it): the
 * entry's objects that sessions and endpoints follow — the primary slot, the list-change feed,
 * the child quota, the principal connections — stay; the config and the lease pool are
 * replaced, and every live connection of the server is closed. The primary reconnects at once
 * under the new entry; every other connection (a session's own, a principal's) reconnects on its
 * next use, lazily, as after an idle close. Once the primary is back, its lists are announced as
 * changed, so every session listing through it hears `list_changed`. A call in flight on a closed
 * connection fails with the upstream's unavailability, as if the server had restarted by itself.
 */
import type { ServerConfig } from '../config/schema.js';
import type { LeasePool } from './lease-pool.js';
import type { ServerEntry } from './registry.js';
import { reachOf, type Reach } from './registry-entry.js';
import { announceListsChanged } from './server-changes.js';

/** The two parts of an entry a restart replaces. */
export type RestartableEntry = ServerEntry & { config: ServerConfig; reach: Reach; pool: LeasePool | undefined };

/**
 * Rejects (the primary's connect error) when the server does not come back; it then keeps
 * retrying in the background. A server stopped at run time (`stopped`) only takes the new entry:
 * nothing reconnects, its new pool stays closed, and `startServer` opens it under the new config.
 */
export async function restartServer(entry: RestartableEntry, config: ServerConfig, newPool: (config: ServerConfig) => LeasePool | undefined, stopped = false): Promise<void> {
  const oldPool = entry.pool;
  entry.config = config;
  entry.reach = reachOf(config);
  entry.pool = newPool(config);
  const primary = entry.primary.current;
  const others = entry.changes.live().filter((link) => link !== primary);
  await Promise.all([oldPool?.close(), entry.primary.discard(primary), ...others.map((link) => link.close())]);
  if (stopped) {
    await entry.pool?.close();
    return;
  }
  const link = await entry.primary.get();
  announceListsChanged((list) => link.announceListChanged(list));
}

/** Tells every session of a server whose tool filters moved: each live connection announces a tools change. */
export function announceToolsChanged(entry: ServerEntry): void {
  for (const link of entry.changes.live()) link.announceListChanged('tools');
}
