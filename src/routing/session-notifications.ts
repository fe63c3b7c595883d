/**
 * What a 2025 session's client hears from its upstreams on its standalone stream, and the
 * resource subscriptions that decide part of it (`SessionScope` in scopes.ts relays every event
 * of the connections session-links.ts follows through this):
 * - a server's list change: always (`notifications/<list>/list_changed`; the client lists again,
 *   through whatever its access rules and enablement show);
 * - a resource's update: only while the session is subscribed to that resource and its current
 *   access profile sees the server — a server its latest token may not see sends it nothing;
 * - a connection's close and task status: never here (the endpoint's task table routes status).
 */
import type { DownstreamSink } from '../rpc/sink.js';
import type { LinkEvent } from '../upstream/link.js';

export class SessionNotifications {
  /** `server\nuri` of each resource the session is subscribed to. */
  private readonly subscriptions = new Set<string>();

  /**
   * @param owner the session's standalone stream.
   * @param shows whether the session's current profile sees `server`, read at each update.
   */
  constructor(
    private readonly owner: DownstreamSink,
    private readonly shows: (server: string) => boolean,
  ) {}

  /** Notes a `resources/subscribe` or `unsubscribe`; false when it changes nothing (already so). */
  noteSubscription(server: string, uri: string, subscribed: boolean): boolean {
    const key = `${server}\n${uri}`;
    if (subscribed === this.subscriptions.has(key)) return false;
    if (subscribed) this.subscriptions.add(key);
    else this.subscriptions.delete(key);
    return true;
  }

  /** Forgets every subscription; answers the server of each, once per subscription it held. */
  clear(): string[] {
    const servers = [...this.subscriptions].map((key) => key.slice(0, key.indexOf('\n')));
    this.subscriptions.clear();
    return servers;
  }

  /** Turns an event of `server`'s connection into what the session's client hears, if anything. */
  relay(server: string, event: LinkEvent): void {
    const notify = (method: string, params?: Record<string, unknown>) =>
      void this.owner.notify(params === undefined ? { method } : { method, params }).catch(() => undefined);
    switch (event.kind) {
      case 'listChanged':
        notify(`notifications/${event.list}/list_changed`);
        return;
      case 'resourceUpdated':
        // Judged by the session's current profile: a server its latest token may not see sends it nothing.
        if (this.subscriptions.has(`${server}\n${String(event.params.uri)}`) && this.shows(server)) {
          notify('notifications/resources/updated', event.params);
        }
        return;
      case 'closed':
      case 'taskStatus': // routed by the endpoint's task table, which knows whose task it is
        return;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  }
}
