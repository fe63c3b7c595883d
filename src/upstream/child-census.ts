/**
 * Live stdio children of one gateway, by server: incremented when a child is spawned, decremented
 * once when it is gone. One per registry, so gateways in one process count their own children.
 */
export class ChildCensus {
  private readonly live = new Map<string, number>();

  spawned(server: string): void {
    this.live.set(server, (this.live.get(server) ?? 0) + 1);
  }

  gone(server: string): void {
    const count = (this.live.get(server) ?? 0) - 1;
    if (count > 0) this.live.set(server, count);
    else this.live.delete(server);
  }

  /** Servers with at least one live child. */
  snapshot(): ReadonlyMap<string, number> {
    return new Map(this.live);
  }
}
