/**
 * List changes of one upstream server, whichever of its connections announced them.
 *
 * An upstream announces `notifications/{tools,prompts,resources}/list_changed` on the connection whose request caused the
 * change (and a 2026 upstream on that connection's `subscriptions/listen` stream), but its state
 * is often shared by every connection: a server backed by a file or a database, or one HTTP
 * server behind many sessions. So a change heard on any connection drops the cached lists of
 * every live connection to that server (the primary that serves sessionless lists, the pooled
 * ones, sessions' and principals' own), and is reported to the server's listeners with the
 * connection it came from, so each can judge whose view it concerns. Dropping a cache costs one
 * re-fetch on next use; it never shows a client anything.
 */
import type { UpstreamLink } from './link.js';
import type { ListKind } from './list-cache.js';
import type { LinkEvent } from './link.js';

export type ChangedList = 'tools' | 'prompts' | 'resources';

const EVERY_LIST: readonly ChangedList[] = ['tools', 'prompts', 'resources'];

/** Tells `sink` that every list changed, one list at a time. */
export function announceListsChanged(sink: (list: ChangedList) => void): void {
  for (const list of EVERY_LIST) sink(list);
}

/** The caches one announced change makes stale (a resource change covers templates too). */
export const STALE_LISTS: Readonly<Record<ChangedList, readonly ListKind[]>> = {
  tools: ['tools'],
  prompts: ['prompts'],
  resources: ['resources', 'resourceTemplates'],
};

export interface ServerChange {
  list: ChangedList;
  /** The connection the upstream announced it on. */
  origin: UpstreamLink;
}

export class ServerChanges {
  private readonly links = new Set<UpstreamLink>();
  private readonly listeners = new Set<(change: ServerChange) => void>();

  /** Live connections followed right now. */
  get size(): number {
    return this.links.size;
  }

  /** Follows one new connection of the server until it closes. */
  track(link: UpstreamLink): void {
    if (link.closed) return;
    this.links.add(link);
    link.on((event: LinkEvent) => {
      if (event.kind === 'closed') this.links.delete(link);
      else if (event.kind === 'listChanged') this.announce(link, event.list);
    });
  }

  /** The live connections followed right now: every connection of the server the registry opened (a restart closes them all). */
  live(): UpstreamLink[] {
    return [...this.links].filter((link) => !link.closed);
  }

  /** Subscribes to every change of the server; returns the unsubscribe function. */
  on(listener: (change: ServerChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private announce(origin: UpstreamLink, list: ChangedList): void {
    // The origin dropped its own caches when the notification arrived.
    for (const link of this.links) if (link !== origin) link.invalidateLists(STALE_LISTS[list]);
    for (const listener of this.listeners) {
      try {
        listener({ list, origin });
      } catch {
        // One listener's failure does not keep the change from the others.
      }
    }
  }
}
