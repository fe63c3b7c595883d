/**
 * Counts restarts of each server's primary connection: every time it becomes `ready` again
 * after it had been `ready` and then left that state (a lost child or HTTP connection
 * re-established). The slot may announce a state it is already in; only changes count.
 * Returns the unsubscribe.
 */
import type { UpstreamRegistry } from './registry.js';
import type { SlotState } from './slot.js';

export function countRestarts(registry: UpstreamRegistry, restarted: (server: string) => void): () => void {
  const unsubscribes = [...registry.entries.values()].map((entry) => {
    let last: SlotState = entry.primary.state;
    let wasReady = last === 'ready';
    return entry.primary.onStateChange((state) => {
      if (state === 'ready' && last !== 'ready') {
        if (wasReady) restarted(entry.name);
        wasReady = true;
      }
      last = state;
    });
  });
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
