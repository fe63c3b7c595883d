/**
 * Closes a node-redis client whatever state its connection is in: gracefully when ready, else
 * at once. node-redis (6.3) misses a socket that is still connecting when the client is
 * destroyed — the socket is assigned once connected, after the destroy looked for it — and the
 * attempt then completes on a closed client, holding a connection open for good. So when a
 * connect attempt was under way, the client is destroyed again once that attempt has settled
 * (bounded by the client's connect timeout).
 */

/** The part of a node-redis client this needs. */
export interface ClosableRedis {
  readonly isReady: boolean;
  close(): Promise<unknown>;
  destroy(): void;
}

/** `connecting` is the client's `connect()` promise (never rejecting), or undefined if it never connected. */
export async function closeRedis(client: ClosableRedis, connecting: Promise<unknown> | undefined): Promise<void> {
  if (client.isReady) {
    await client.close().catch(() => client.destroy());
    return;
  }
  client.destroy();
  if (connecting === undefined) return;
  await connecting;
  client.destroy();
}
