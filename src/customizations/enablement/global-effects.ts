/**
 * What the operator's decisions do to running servers: a server whose global value (its own and
 * its plugin's: config `enabled` and global toggles) is false is stopped — every connection
 * closed, stdio children reaped, state `stopped` — and started again (`starting` → `ready`) once
 * it is true again. Session and workspace decisions only hide a server; they never stop it.
 */
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { Enablement } from './enablement.js';

/**
 * Brings the registry in line with the global decisions. Resolves when every server that had to
 * stop has stopped (children reaped) and every one that had to start is `starting`; connecting
 * goes on in the background (its state says how it goes).
 */
export async function applyGlobalDecisions(enablement: Enablement, registry: UpstreamRegistry): Promise<void> {
  const changes: Array<Promise<void>> = [];
  for (const name of registry.entries.keys()) {
    const wanted = enablement.globallyEnabled(name);
    if (!wanted && !registry.isStopped(name)) changes.push(registry.stopServer(name));
    else if (wanted && registry.isStopped(name)) changes.push(registry.startServer(name));
  }
  await Promise.all(changes);
}
