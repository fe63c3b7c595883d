/**
 * Where the tools a 2026-era caller loaded with `search_tools` `load: true` are kept: exposed
 * names under a key that stands for one caller (endpoint, principal and workspace, hashed by the
 * tool surface, so no principal name is stored). A 2025-era session keeps its own in memory
 * (`catalogue/surface/loaded-tools.ts`); a 2026 request has no session, so its caller's loads
 * live here — in this process, or in Redis when replicas share state (`cluster/redis-loaded-names.ts`),
 * so a caller's next request finds them whichever replica answers it.
 *
 * Bounded everywhere: per key by the surface's `max` (the config's `catalogue.maxLoadedTools`),
 * oldest dropped first; in memory by a number of keys and bytes (least recently used key dropped
 * first); in Redis by an idle expiry. Whether a stored name is listed is decided against the
 * current catalogue on every list, so a name hidden or removed since is never shown.
 */
import { LRUCache } from 'lru-cache';

export interface LoadOutcome {
  /** Names newly loaded (and still loaded after the bound applied). */
  readonly loaded: string[];
  /** Names dropped to make room (none of them loaded by this call). */
  readonly dropped: string[];
}

export interface LoadedNamesStore {
  /** The names loaded under `key`, oldest first; none when the key is unknown. */
  names(key: string): Promise<readonly string[]>;
  /** Loads `names` in order under `key` (one already loaded stays where it is), keeping at most `max`, oldest dropped first. */
  load(key: string, names: readonly string[], max: number): Promise<LoadOutcome>;
}

/** What one load did to an ordered set, given the names it added and the names the bound removed. */
export function loadOutcome(added: readonly string[], removed: readonly string[]): LoadOutcome {
  const gone = new Set(removed);
  const fresh = new Set(added);
  // A name loaded and dropped again in one call (more names than the bound) is reported as neither.
  return { loaded: added.filter((name) => !gone.has(name)), dropped: removed.filter((name) => !fresh.has(name)) };
}

export interface MemoryLoadedNamesOptions {
  /** Most keys (callers) kept. */
  readonly maxKeys: number;
  /** Most bytes kept over every key (two per character, plus a per-name overhead). */
  readonly maxBytes: number;
}

export const DEFAULT_MEMORY_LOADED_NAMES: MemoryLoadedNamesOptions = { maxKeys: 10_000, maxBytes: 16 * 2 ** 20 };

const NAME_OVERHEAD = 48;

/** The store of a gateway on its own: this process's memory. */
export function memoryLoadedNames(options: MemoryLoadedNamesOptions = DEFAULT_MEMORY_LOADED_NAMES): LoadedNamesStore {
  if (!Number.isInteger(options.maxKeys) || options.maxKeys < 1) throw new TypeError('loaded names: maxKeys must be a positive integer');
  if (!Number.isInteger(options.maxBytes) || options.maxBytes < 1) throw new TypeError('loaded names: maxBytes must be a positive integer');
  const sets = new LRUCache<string, readonly string[]>({
    max: options.maxKeys,
    maxSize: options.maxBytes,
    sizeCalculation: (names) => Math.max(1, names.reduce((sum, name) => sum + 2 * name.length + NAME_OVERHEAD, 0)),
  });
  return {
    async names(key) {
      return sets.get(key) ?? [];
    },
    async load(key, names, max) {
      if (!Number.isInteger(max) || max < 1) throw new TypeError('loaded names: max must be a positive integer');
      const current = [...(sets.get(key) ?? [])];
      const present = new Set(current);
      const added: string[] = [];
      for (const name of names) {
        if (present.has(name)) continue;
        present.add(name);
        current.push(name);
        added.push(name);
      }
      const removed = current.length > max ? current.splice(0, current.length - max) : [];
      if (added.length > 0) sets.set(key, current);
      return loadOutcome(added, removed);
    },
  };
}
