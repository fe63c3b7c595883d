/**
 * Counts restarts of each server's primary connection: every time it is `ready` again after
 * having been `ready` before (a lost child or HTTP connection re-established). Returns the
 * unsubscribe.
 */
import type { UpstreamRegistry } from './registry.js';

export function countRestarts(registry: UpstreamRegistry, restarted: (server: string) => void): () => void {
  const unsubscribes = [...registry.entries.values()].map((entry) => {
    let wasReady = entry.primary.state === 'ready';
    return entry.primary.onStateChange((state) => {
      if (state !== 'ready') return;
      if (wasReady) restarted(entry.name);
      wasReady = true;
    });
  });
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
