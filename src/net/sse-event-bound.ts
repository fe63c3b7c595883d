/**
 * An upstream `text/event-stream` body with every event bounded: bytes are passed on one whole
 * event at a time (an event ends at a blank line, WHATWG HTML §9.2.6: CRLF, LF or CR line ends),
 * and an event — or an endless line — that grows past `maxEventBytes` is never buffered further:
 * the source is destroyed (its connection reset) and the stream ends with what `oversized`
 * returns (bytes the consumer reads instead, e.g. an error answer for the request) or fails with
 * the error it returns. The consumer never sees part of an event.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { attach, endWritable } from './bounded-body.js';

const LF = 0x0a;
const CR = 0x0d;

/** What an over-long event is replaced with: bytes to end the stream with, or an error to fail it with. */
export type OversizedEvent = () => Buffer | Error;

export function boundEventStream(source: Readable, maxEventBytes: number, oversized: OversizedEvent): Readable {
  if (!Number.isSafeInteger(maxEventBytes) || maxEventBytes < 1) throw new TypeError('maxEventBytes must be a positive integer');
  /** Bytes of the current, unfinished event (held back until its blank line). */
  let held: Buffer[] = [];
  let heldBytes = 0;
  /** Bytes of the line being read (0: at the start of a line). */
  let lineBytes = 0;
  /** The last chunk ended in CR: an LF opening the next one belongs to that line end. */
  let afterCR = false;
  let ended = false;

  const out = new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (ended) return done();
      let start = 0;
      if (afterCR && chunk.length > 0) {
        afterCR = false;
        if (chunk[0] === LF) start = 1;
      }
      /** Offset just past the last event end in this chunk (-1: none); the current event starts there. */
      let flushTo = -1;
      let oversize = false;
      let lf = chunk.indexOf(LF, start);
      let cr = chunk.indexOf(CR, start);
      let position = start;
      while (position < chunk.length) {
        if (lf !== -1 && lf < position) lf = chunk.indexOf(LF, position);
        if (cr !== -1 && cr < position) cr = chunk.indexOf(CR, position);
        const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
        if (end === -1) {
          lineBytes += chunk.length - position;
          break;
        }
        const blank = lineBytes === 0 && end === position;
        lineBytes = 0;
        let next = end + 1;
        if (chunk[end] === CR) {
          if (next === chunk.length) afterCR = true;
          else if (chunk[next] === LF) next += 1;
        }
        position = next;
        if (!blank) continue;
        // An event ended here: its size is what was held before plus its part of this chunk.
        const size = (flushTo === -1 ? heldBytes : 0) + position - (flushTo === -1 ? 0 : flushTo);
        if (size > maxEventBytes) {
          oversize = true;
          break;
        }
        flushTo = position;
      }
      // The event still open (or the one found too large) so far.
      const openBytes = flushTo === -1 ? heldBytes + chunk.length : chunk.length - flushTo;
      if (oversize || openBytes > maxEventBytes) {
        // Complete events before the over-long one still go out; then the replacement.
        if (flushTo !== -1) this.push(Buffer.concat([...held, chunk.subarray(0, flushTo)]));
        ended = true;
        held = [];
        heldBytes = 0;
        source.unpipe(out);
        source.destroy();
        const replacement = oversized();
        if (replacement instanceof Error) return done(replacement);
        this.push(replacement);
        this.push(null);
        done();
        return endWritable(out);
      }
      if (flushTo === -1) {
        held.push(chunk);
        heldBytes += chunk.length;
        return done();
      }
      const complete = held.length === 0 ? chunk.subarray(0, flushTo) : Buffer.concat([...held, chunk.subarray(0, flushTo)]);
      held = flushTo < chunk.length ? [chunk.subarray(flushTo)] : [];
      heldBytes = chunk.length - flushTo;
      done(null, complete);
    },
    flush(done: TransformCallback) {
      // The source ended mid-event: pass it on as it is (the consumer drops an unfinished event).
      if (heldBytes > 0 && !ended) this.push(Buffer.concat(held));
      held = [];
      done();
    },
  });
  return attach(source, out, () => ended);
}
