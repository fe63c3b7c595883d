/**
 * Drops a response body the caller does not need (an error page, an "Accepted"), reading at most
 * `maxBytes` of it before letting go.
 *
 * Why not `body.cancel()` at once: on a body `dispatchHop` streams (`Readable.toWeb` over undici's
 * body), a cancel before the first read loses a race inside Node 20's stream adapter — the data
 * already buffered is enqueued into the cancelled stream on the next tick and throws
 * `ERR_INVALID_STATE` where nothing can catch it (an uncaught exception, measured). After one
 * read the cancel is safe.
 */
const DEFAULT_MAX_BYTES = 64 * 1024;

export async function discardBody(body: ReadableStream<Uint8Array> | null, maxBytes = DEFAULT_MAX_BYTES): Promise<void> {
  if (body === null) return;
  const reader = body.getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      bytes += value.byteLength;
      if (bytes > maxBytes) break;
    }
    await reader.cancel();
  } catch {
    // Cut or failed: nothing left to drop.
  }
}
