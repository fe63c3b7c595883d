/**
 * Two servers listing the same resource URI: URIs are global identifiers and are not namespaced,
 * so the catalogue keeps the first server's (in the configured order) and the other's resource is
 * neither listed nor readable through the aggregate (catalogue/merge.ts, `mergeResources`). Once
 * the servers' resource lists are known at start, this says so, one warning per pair of servers.
 */
import type { Logger } from '../observability/logger.js';
import type { UpstreamRegistry } from './registry.js';

/** Most URIs quoted in one warning, and most characters of each. */
const MAX_URIS = 5;
const MAX_URI_CHARS = 200;

export interface ShadowedResources {
  /** The server listed first: it keeps the URIs. */
  readonly kept: string;
  /** The server whose resources of those URIs disappear. */
  readonly dropped: string;
  readonly uris: readonly string[];
}

/** Which servers' resources another server, earlier in `lists`, shadows. Pure. */
export function shadowedResources(lists: ReadonlyArray<{ server: string; resources: readonly unknown[] }>): ShadowedResources[] {
  const owner = new Map<string, string>();
  const pairs = new Map<string, { kept: string; dropped: string; uris: string[] }>();
  for (const { server, resources } of lists) {
    for (const resource of resources) {
      const uri = (resource as { uri?: unknown } | null)?.uri;
      if (typeof uri !== 'string') continue;
      const first = owner.get(uri);
      if (first === undefined) {
        owner.set(uri, server);
        continue;
      }
      if (first === server) continue;
      const key = JSON.stringify([first, server]);
      const pair = pairs.get(key) ?? { kept: first, dropped: server, uris: [] };
      pair.uris.push(uri);
      pairs.set(key, pair);
    }
  }
  return [...pairs.values()];
}

/**
 * Lists the resources of every server whose primary connection is up (the connection's cache keeps
 * them for the catalogue) and logs each shadowing pair. Never throws: a list that cannot be
 * fetched is the catalogue's problem, reported there.
 */
export async function warnAboutShadowedResources(registry: UpstreamRegistry, logger: Logger): Promise<void> {
  const entries = [...registry.entries.values()].filter((entry) => entry.primary.state === 'ready');
  const links = await Promise.all(entries.map((entry) => entry.primary.get().then((link) => ({ server: entry.name, link }), () => undefined)));
  // Only servers that offer resources are asked, and only when two do: one server shadows nothing.
  const offering = links.filter((l): l is NonNullable<typeof l> => l !== undefined && l.link.capabilities.resources !== undefined);
  if (offering.length < 2) return;
  const lists = await Promise.all(
    offering.map(async ({ server, link }) => ({ server, resources: await link.list('resources').catch(() => []) })),
  );
  for (const pair of shadowedResources(lists)) {
    logger.warn(
      {
        kept: pair.kept,
        dropped: pair.dropped,
        uris: pair.uris.slice(0, MAX_URIS).map((uri) => (uri.length > MAX_URI_CHARS ? `${uri.slice(0, MAX_URI_CHARS)}…` : uri)),
        ...(pair.uris.length > MAX_URIS ? { more: pair.uris.length - MAX_URIS } : {}),
      },
      `servers ${pair.kept} and ${pair.dropped} list ${pair.uris.length} resource URI(s) in common: ${pair.kept} (configured first) keeps them; ${pair.dropped}'s are neither listed nor readable. Disable one server's copy or give it other URIs`,
    );
  }
}
