/**
 * Counts restarts of each server's primary connection: every time it becomes `ready` again
 * after it had been `ready` and then left that state (a lost child or HTTP connection
 * re-established), a server a reload added included. The slot may announce a state it is already in; only changes count.
 * Returns the unsubscribe.
 */
import type { ServerEntry, UpstreamRegistry } from './registry.js';
import type { SlotState } from './slot.js';

export function countRestarts(registry: UpstreamRegistry, restarted: (server: string) => void): () => void {
  const follow = (entry: ServerEntry) => {
    let last: SlotState = entry.primary.state;
    let wasReady = last === 'ready';
    return entry.primary.onStateChange((state) => {
      if (state === 'ready' && last !== 'ready') {
        if (wasReady) restarted(entry.name);
        wasReady = true;
      }
      last = state;
    });
  };
  const unsubscribes = [...registry.entries.values()].map(follow);
  // A server a reload adds is counted from its first connection attempt on.
  unsubscribes.push(registry.onServerAdded((entry) => unsubscribes.push(follow(entry))));
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
