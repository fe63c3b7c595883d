/**
 * Reading a request body straight from the Node request under @hono/node-server. Asking the Fetch
 * `Request` for its body (or its signal) makes @hono/node-server build the full WHATWG Request
 * around a `ReadableStream` over the socket: `newRequestFromIncoming` alone was 5–7% of the
 * gateway's CPU in `tools/call` profiles (bench/profile.ts, Node 20). The bytes are the same.
 */
import { IncomingMessage } from 'node:http';
import type { Context } from 'hono';

/**
 * What the reader uses of a Node request: its data events, and pausing it; and its socket, whose
 * close tells a 2026 call that its client went away (request-2026.ts).
 */
export type IncomingBody = Pick<IncomingMessage, 'on' | 'off' | 'pause' | 'readableEnded' | 'destroyed' | 'socket'>;

/** The Node request behind a Hono context, when running under @hono/node-server's HTTP/1 server. */
export function incomingMessageOf(c: Context): IncomingMessage | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  const incoming = (env as { incoming: unknown }).incoming;
  return incoming instanceof IncomingMessage ? incoming : undefined;
}

/** The same request, as the body reader sees it. */
export function incomingBodyOf(c: Context): IncomingBody | undefined {
  return incomingMessageOf(c);
}

/**
 * The body's chunks, or undefined as soon as they add up to more than `maxBytes`: the reader
 * stops there and pauses the request, keeping nothing of the rest (@hono/node-server discards
 * what is left once the response is sent). Rejects when the client hangs up or breaks the
 * framing before the end of the body.
 */
export function readIncomingBounded(incoming: IncomingBody, maxBytes: number): Promise<Buffer[] | undefined> {
  // Destroyed: the client is gone. Ended: something read the body already; it cannot be read twice.
  if (incoming.destroyed || incoming.readableEnded) return Promise.reject(new Error('request body no longer readable'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = (): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        stop();
        incoming.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(chunks);
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    // 'close' without 'end' (and without 'error', which Node emits only to listeners): a hang-up.
    const onClose = (): void => onError(new Error('request closed before the end of its body'));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}
