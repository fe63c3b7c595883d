/**
 * The servers one endpoint shows, in merge order. The registry's own roster (every server it
 * holds: the aggregate's and the agent endpoints') grows when a reload adds a server; a side
 * channel's holds its one server for good. A server a reload removes stays in the roster — it is
 * hidden through enablement (routing/visibility.ts) — so a name is never reused for another slot.
 *
 * `names` is a frozen snapshot replaced on every addition: whoever holds one keeps a consistent
 * list, whoever reads `names` again sees the addition. Parts that subscribe per server (a
 * session's own connections, list-change feeds) follow `onAdded`.
 */

export class ServerRoster {
  private list: readonly string[];
  private readonly followers = new Set<(server: string) => void>();

  constructor(names: readonly string[]) {
    this.list = Object.freeze([...names]);
  }

  /** A roster that never grows (a side channel's, a test's). */
  static of(names: readonly string[]): ServerRoster {
    return new ServerRoster(names);
  }

  /** The servers now, in merge order (additions last). */
  get names(): readonly string[] {
    return this.list;
  }

  has(server: string): boolean {
    return this.list.includes(server);
  }

  /** Appends `server` (no-op when present) and tells every follower, in the order they subscribed. */
  add(server: string): void {
    if (this.has(server)) return;
    this.list = Object.freeze([...this.list, server]);
    for (const follower of [...this.followers]) {
      try {
        follower(server);
      } catch {
        // One follower's failure does not keep the addition from the others.
      }
    }
  }

  /** Called with each server added from now on; returns the unsubscribe. */
  onAdded(follower: (server: string) => void): () => void {
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }
}
