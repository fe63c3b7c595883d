/**
 * What an endpoint publishes to its 2026 clients' `subscriptions/listen` streams. The SDK's listen
 * streams of one endpoint are one audience, whoever opened them, so only what concerns every
 * listener is published:
 * - a change a server's primary announced (sessionless lists come from it);
 * - a change heard on another connection of the server (pooled, a session's own) when the
 *   merged lists the listeners see really moved (list-watch.ts);
 * - a principal connection's change only when every client is the one anonymous principal
 *   (auth off). With auth on, a principal's own changes are not published: its list results say
 *   `ttlMs: 0` and `cacheScope: "private"`, so a client re-lists rather than trusting a cache.
 */
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { ServerRoster } from '../../upstream/server-roster.js';
import { announceListsChanged, type ChangedList } from '../../upstream/server-changes.js';
import { ListWatch } from './list-watch.js';

/**
 * Feeds `publish` for `servers`, judged against `catalogue` (the endpoint's sessionless view); a
 * server a reload adds is followed from then on, and its arrival published as a change of every
 * list. Returns the unsubscribe.
 */
export function feedListeners(
  registry: UpstreamRegistry,
  servers: ServerRoster,
  catalogue: Catalogue,
  publish: (list: ChangedList) => void,
): () => void {
  const watch = new ListWatch(catalogue, publish);
  const unsubscribes: Array<() => void> = [];
  const follow = (server: string) => {
    const entry = registry.entry(server);
    const principals = entry.principals;
    unsubscribes.push(
      entry.changes.on((change) => {
        if (change.origin === entry.primary.current) watch.announced(change.list);
        else if (principals === undefined) watch.heard(change.list);
      }),
    );
    if (principals !== undefined) {
      unsubscribes.push(
        principals.on((key, event) => {
          if (event.kind === 'listChanged' && key.principal === undefined) publish(event.list);
        }),
      );
    }
  };
  for (const server of servers.names) follow(server);
  unsubscribes.push(
    servers.onAdded((server) => {
      follow(server);
      announceListsChanged((list) => watch.announced(list));
    }),
  );
  watch.prime();
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
