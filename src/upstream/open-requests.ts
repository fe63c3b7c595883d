/**
 * The requests a link has sent that the upstream has not answered yet, by JSON-RPC id: what the
 * link proves attribution against, and what decides when a pooled connection may serve again.
 *
 * A request is open from the moment the SDK hands it to the transport until a response with its
 * id arrives (or the connection closes). A request the SDK gave up on — cancelled by the client,
 * timed out — stays open, marked abandoned: the upstream may still be working on it (MCP 2025-11-25
 * basic/utilities/cancellation: a receiver SHOULD NOT answer a cancelled request, and may not have
 * seen the cancellation yet), so whatever it sends may be that call's. Only a response, or closing
 * the connection, ends it.
 */

/** A JSON-RPC id as a map key: the SDK matches a response by `Number(id)`, so `5` and `"5"` are one id. */
function keyOf(id: unknown): string {
  return String(id);
}

interface OpenRequest<C> {
  /** The call the request was sent for; absent for the link's own requests (list pages). */
  call: C | undefined;
  abandoned: boolean;
}

export class OpenRequests<C> {
  private readonly open = new Map<string, OpenRequest<C>>();
  /** Set while `send` runs: the next request handed to the transport is for this call. */
  private expecting: { call: C | undefined; id?: string } | undefined;
  private readonly idleWaiters = new Set<(reusable: boolean) => void>();

  /** True when every request sent through `send` has been answered. */
  get idle(): boolean {
    return this.open.size === 0;
  }

  /**
   * Runs `send`, which must hand exactly one request to the transport before it returns (the SDK
   * does, synchronously, in `Protocol.request`), and tracks that request for `call`. Settles as
   * `send` does; if the upstream never answered, the request stays open, abandoned.
   */
  async send<T>(call: C | undefined, send: () => Promise<T>): Promise<T> {
    const expecting: { call: C | undefined; id?: string } = { call };
    this.expecting = expecting;
    let pending: Promise<T>;
    try {
      pending = send();
    } finally {
      this.expecting = undefined;
    }
    try {
      return await pending;
    } finally {
      const entry = expecting.id === undefined ? undefined : this.open.get(expecting.id);
      if (entry !== undefined) entry.abandoned = true;
    }
  }

  /** Sees every message the link sends; notes the id of the request `send` is waiting for. */
  noteSent(message: unknown): void {
    const expecting = this.expecting;
    if (expecting === undefined || expecting.id !== undefined) return;
    const sent = message as { method?: unknown; id?: unknown };
    if (typeof sent.method !== 'string' || sent.id === undefined) return;
    expecting.id = keyOf(sent.id);
    this.open.set(expecting.id, { call: expecting.call, abandoned: false });
  }

  /** A response arrived: its request is no longer open. */
  answered(id: unknown): void {
    if (!this.open.delete(keyOf(id))) return;
    if (this.open.size === 0) this.wake(true);
  }

  /**
   * The call that is provably the cause of whatever the upstream sends now: the only open
   * request, when it belongs to a call that has not been abandoned. Undefined when no request is
   * open, when several are (the upstream could be working on any of them), or when the only one
   * is abandoned.
   */
  soleLiveCall(): C | undefined {
    if (this.open.size !== 1) return undefined;
    for (const entry of this.open.values()) return entry.abandoned ? undefined : entry.call;
    return undefined;
  }

  /**
   * Resolves true once every request is answered; false if `timeoutMs` passes first or the
   * connection closes (`clear`), when the connection is not fit to serve again.
   */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.idle) return Promise.resolve(true);
    return new Promise((resolve) => {
      const settle = (reusable: boolean) => {
        clearTimeout(timer);
        this.idleWaiters.delete(settle);
        resolve(reusable);
      };
      const timer = setTimeout(() => settle(false), timeoutMs);
      timer.unref();
      this.idleWaiters.add(settle);
    });
  }

  /** The connection closed: nothing more can arrive for any request. */
  clear(): void {
    this.open.clear();
    this.wake(false);
  }

  private wake(reusable: boolean): void {
    for (const settle of [...this.idleWaiters]) settle(reusable);
  }
}
