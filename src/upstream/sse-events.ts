/**
 * A bounded reader of `text/event-stream` bodies, the framing the HTTP+SSE transport of MCP
 * 2024-11-05 receives on: bytes in, complete events out, parsed as the WHATWG HTML standard
 * ("Server-sent events", §9.2.6 "Interpreting an event stream") says — lines end in CRLF, LF or
 * CR, a blank line dispatches, `:` starts a comment, a value loses one leading space, `data`
 * lines join with LF, an event without data is not dispatched, a leading BOM is skipped.
 *
 * Bounded: an event's retained bytes (its `data` and `event` lines, plus the line being read)
 * may not exceed `maxEventBytes`; past that the reader refuses instead of buffering an upstream
 * that streams one endless line or event. `id` and `retry` are ignored: an HTTP+SSE session
 * cannot be resumed, so nothing reconnects with them.
 */
import { asBuffer, ChunkQueue } from './chunk-queue.js';

export interface SseEvent {
  /** The `event` field, `message` when the event named none. */
  readonly type: string;
  readonly data: string;
}

export type SsePush = { ok: true; events: SseEvent[] } | { ok: false; code: 'EVENT_TOO_LARGE' };

export interface SseEventReader {
  /** Feeds one chunk of the body; returns the events it completed, in order. */
  push(chunk: Uint8Array): SsePush;
}

const LF = 0x0a;
const CR = 0x0d;
const BOM = '\ufeff';

export function createSseEventReader(maxEventBytes: number): SseEventReader {
  if (!Number.isInteger(maxEventBytes) || maxEventBytes <= 0) throw new TypeError('SSE reader: maxEventBytes must be a positive integer');
  const line = new ChunkQueue();
  let data: string[] = [];
  let type = '';
  /** Bytes of the current event's kept lines. */
  let eventBytes = 0;
  /** The last chunk ended in CR: an LF opening the next one belongs to that line end. */
  let afterCR = false;
  let firstLine = true;

  const takeLine = (line: string, bytes: number, out: SseEvent[]): void => {
    let text = line;
    if (firstLine) {
      firstLine = false;
      if (text.startsWith(BOM)) text = text.slice(1);
    }
    if (text === '') {
      if (data.length > 0) out.push({ type: type === '' ? 'message' : type, data: data.join('\n') });
      data = [];
      type = '';
      eventBytes = 0;
      return;
    }
    if (text.charCodeAt(0) === 0x3a) return; // ':' — a comment (keep-alives)
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    if (field === 'data') {
      data.push(value);
      eventBytes += bytes;
    } else if (field === 'event') {
      type = value;
      eventBytes += bytes;
    }
  };

  return {
    push(chunk) {
      const buf = asBuffer(chunk);
      const events: SseEvent[] = [];
      let start = 0;
      if (afterCR && buf.length > 0) {
        afterCR = false;
        if (buf[0] === LF) start = 1;
      }
      // Positions of the next LF and CR, found once each (a scan per line would be quadratic).
      let lf = buf.indexOf(LF, start);
      let cr = buf.indexOf(CR, start);
      while (start < buf.length) {
        if (lf !== -1 && lf < start) lf = buf.indexOf(LF, start);
        if (cr !== -1 && cr < start) cr = buf.indexOf(CR, start);
        const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
        const size = line.bytes + (end === -1 ? buf.length : end) - start;
        if (eventBytes + size > maxEventBytes) return { ok: false, code: 'EVENT_TOO_LARGE' };
        if (end === -1) {
          line.push(Buffer.from(buf.subarray(start)));
          break;
        }
        const text = line.take(buf.subarray(start, end)).toString('utf8');
        if (buf[end] === CR && end + 1 === buf.length) afterCR = true;
        start = buf[end] === CR && buf[end + 1] === LF ? end + 2 : end + 1;
        takeLine(text, size, events);
      }
      return { ok: true, events };
    },
  };
}
