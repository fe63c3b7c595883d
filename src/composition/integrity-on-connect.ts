/**
 * Under `hold`, tool integrity judges a server's listing as soon as its primary connection is up,
 * not only when a client first lists tools (catalogue.ts judges every listing as before; under
 * `warn` nothing is served differently, so that is all it does there): at start, awaited, so
 * the first client's handshake already answers the server's pinned instructions (under `hold`,
 * instructions that were never judged are held, and a 2025 client hears instructions only at
 * `initialize`); and after every reconnect, so a restarted upstream's changed tools and
 * instructions are held and shown to the admin before any client lists them.
 */
import type { ToolIntegrity } from '../integrity/tool-integrity.js';
import type { Logger } from '../observability/logger.js';
import type { ServerEntry, UpstreamRegistry } from '../upstream/registry.js';

async function judgePrimary(entry: ServerEntry, integrity: ToolIntegrity, logger: Logger): Promise<void> {
  const link = entry.primary.current;
  if (link === undefined) return;
  try {
    const { items } = await link.hintedList('tools');
    await integrity.judge([{ server: entry.name, items, instructions: link.instructions }]);
  } catch (error) {
    // The first listing of a client judges it then; nothing is shown that was not judged.
    logger.debug({ server: entry.name, err: (error as Error).message }, 'tool integrity: the listing of a new connection could not be judged yet');
  }
}

/**
 * Follows every server's primary (those a reload adds included); `first()` judges the primaries up
 * now. Returns the unsubscribe with it.
 */
export function judgeOnConnect(registry: UpstreamRegistry, integrity: ToolIntegrity, logger: Logger): { first(): Promise<void>; stop(): void } {
  if (integrity.mode !== 'hold') return { first: async () => undefined, stop: () => undefined };
  // Connections made while the gateway starts wait for `first()`: a listing judged before the
  // other servers are up would be scanned without their names (no cross-server checks).
  let started = false;
  const follow = (entry: ServerEntry) => {
    let last = entry.primary.state;
    return entry.primary.onStateChange((state) => {
      if (started && state === 'ready' && last !== 'ready') void judgePrimary(entry, integrity, logger);
      last = state;
    });
  };
  const unsubscribes = [...registry.entries.values()].map(follow);
  unsubscribes.push(registry.onServerAdded((entry) => unsubscribes.push(follow(entry))));
  return {
    first: async () => {
      started = true;
      await Promise.all([...registry.entries.values()].map((entry) => judgePrimary(entry, integrity, logger)));
    },
    stop: () => {
      for (const unsubscribe of unsubscribes) unsubscribe();
    },
  };
}
