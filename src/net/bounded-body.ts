/**
 * Reading an upstream's response body without letting the upstream choose how much memory that
 * takes: a whole body read up to a cap (a JSON answer), and a body passed on up to a cap and cut
 * there (an error page, an answer of a type nobody parses). Past a cap the source is destroyed,
 * which resets its connection: nothing more of it is read or kept.
 */
import { Readable, Transform, type TransformCallback } from 'node:stream';

/** What one hop may read of a response body. */
export interface BodyLimits {
  /** A JSON answer read whole, and each event of an event stream (`sse-event-bound.ts`). */
  readonly maxMessageBytes: number;
  /** Any other body (error statuses, unexpected types): passed on up to this, then cut. */
  readonly maxOtherBodyBytes: number;
}

/** The default policy's message cap, and 64 KiB for bodies only read for an error message. */
export const DEFAULT_BODY_LIMITS: BodyLimits = Object.freeze({
  maxMessageBytes: 16 * 1024 * 1024,
  maxOtherBodyBytes: 64 * 1024,
});

/**
 * The whole of `source`, or `undefined` (and `source` destroyed) as soon as it exceeds `max`
 * bytes. Rejects as the source does (a cut, an abort).
 */
export async function readBounded(source: Readable, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > max) {
      source.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
}

/**
 * `source` as a stream that ends after `max` bytes (the rest is never read: `source` is
 * destroyed). Errors of `source` before that are passed on; a consumer that cancels destroys it.
 */
export function truncateBody(source: Readable, max: number): Readable {
  let passed = 0;
  let cut = false;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (cut) return done();
      const room = max - passed;
      if (chunk.length <= room) {
        passed += chunk.length;
        return done(null, chunk);
      }
      cut = true;
      if (room > 0) this.push(chunk.subarray(0, room));
      this.push(null);
      source.unpipe(out);
      source.destroy();
      done();
      endWritable(out);
    },
  });
  return attach(source, out, () => cut);
}

/**
 * Finishes the writable side of `out` after its readable side ended early: a stream consumer
 * such as `Readable.toWeb` waits for both sides of a duplex before it reports the end.
 */
export function endWritable(out: Transform): void {
  queueMicrotask(() => out.end());
}

/**
 * Pipes `source` into `out` so that `out` can end early on its own (`ended()` true: the source's
 * late errors are ignored), the source's errors otherwise reach `out`, and a consumer that goes
 * away (closing `out`) destroys the source.
 */
export function attach(source: Readable, out: Transform, ended: () => boolean): Transform {
  source.on('error', (error) => {
    if (!ended()) out.destroy(error);
  });
  out.on('close', () => {
    if (!source.destroyed && !source.readableEnded) source.destroy();
  });
  source.pipe(out);
  return out;
}
