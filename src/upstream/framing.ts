/**
 * Message framing for MCP over stdio: pure, incremental decoders and encoders.
 *
 * Two framings exist in the wild: newline-delimited JSON (`ndjson`, what the MCP stdio binding
 * specifies) and LSP-style `Content-Length: N\r\n\r\n<N bytes>` (`contentLength`, used by servers
 * built on LSP plumbing). Decoders take chunks split anywhere (inside a header, inside a multi-byte
 * UTF-8 character) and are bounded: nothing a child writes can make them buffer more than
 * `maxMessageBytes` (plus a small header allowance). Errors never carry the bytes that caused
 * them: a child's output may contain secrets, and errors end up in logs.
 */
import { asBuffer, ChunkQueue } from './chunk-queue.js';

export type Framing = 'ndjson' | 'contentLength';
/** `auto` picks a framing from what the child writes; see `StdioUpstreamTransport`. */
export type FramingMode = Framing | 'auto';

export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** A Content-Length header block longer than this is not a header: the framing is lost. */
const MAX_HEADER_BYTES = 8 * 1024;
/** How many bytes of a skipped non-JSON line a `noise` event carries (for a debug log). */
const NOISE_PREVIEW_BYTES = 256;
/** Undecided `auto` input longer than this cannot be a header name; it is taken as ndjson. */
const DETECT_PREFIX_BYTES = 32;

export type DecodeEvent =
  /** One complete JSON value (not yet checked to be JSON-RPC). */
  | { readonly kind: 'message'; readonly value: unknown; readonly bytes: number }
  /** A framed message that is not valid JSON: skipped, the stream goes on. */
  | { readonly kind: 'invalid'; readonly bytes: number }
  /** ndjson only: a line that does not even look like JSON (a banner, a stray log line). */
  | { readonly kind: 'noise'; readonly bytes: number; readonly preview: string }
  /** `auto` only: the framing the child's first output bytes use. */
  | { readonly kind: 'detected'; readonly framing: Framing }
  /** The stream cannot go on (message over the limit, unreadable header); the decoder is spent. */
  | { readonly kind: 'fatal'; readonly reason: 'too-large' | 'bad-header'; readonly message: string };

export interface DecoderOptions {
  /** Largest message accepted, in bytes of UTF-8; default 16 MiB. */
  maxMessageBytes?: number;
}

export interface MessageDecoder {
  /** Feeds one chunk and returns what it completed, in order. Ignores input once spent. */
  push(chunk: Uint8Array): DecodeEvent[];
  /** True after a `fatal` event. */
  readonly failed: boolean;
}

/** Newline-delimited JSON: one message per line, `\r\n` tolerated, blank lines ignored. */
export function createNdjsonDecoder(options: DecoderOptions = {}): MessageDecoder {
  const max = maxBytesOf(options);
  const pending = new ChunkQueue();
  let failed = false;
  return {
    get failed() {
      return failed;
    },
    push(chunk) {
      const events: DecodeEvent[] = [];
      if (failed) return events;
      const buf = asBuffer(chunk);
      let start = 0;
      while (start < buf.length) {
        const newline = buf.indexOf(0x0a, start);
        if (newline === -1) {
          // One byte of slack for a `\r` that may turn out to precede the newline.
          if (pending.bytes + buf.length - start > max + 1) {
            failed = true;
            pending.clear();
            events.push(tooLarge(max));
            break;
          }
          pending.push(Buffer.from(buf.subarray(start)));
          break;
        }
        const line = pending.take(buf.subarray(start, newline));
        start = newline + 1;
        const event = decodeLine(line, max);
        if (event === undefined) continue;
        events.push(event);
        if (event.kind === 'fatal') {
          failed = true;
          break;
        }
      }
      return events;
    },
  };
}

/** LSP-style framing: `Content-Length` required, other headers ignored, names case-insensitive. */
export function createContentLengthDecoder(options: DecoderOptions = {}): MessageDecoder {
  const max = maxBytesOf(options);
  let header: Buffer = Buffer.alloc(0);
  let bodyLength = -1; // -1 while reading a header
  const body = new ChunkQueue();
  let failed = false;

  const fail = (event: DecodeEvent & { kind: 'fatal' }, events: DecodeEvent[]): void => {
    failed = true;
    header = Buffer.alloc(0);
    body.clear();
    events.push(event);
  };

  return {
    get failed() {
      return failed;
    },
    push(chunk) {
      const events: DecodeEvent[] = [];
      const buf = asBuffer(chunk);
      let pos = 0;
      while (!failed && pos < buf.length) {
        if (bodyLength < 0) {
          // Whitespace between messages (some servers end a body with a newline) is skipped.
          if (header.length === 0) pos = skipWhitespace(buf, pos);
          if (pos >= buf.length) break;
          const slice = buf.subarray(pos, pos + (MAX_HEADER_BYTES - header.length));
          const combined = Buffer.concat([header, slice]);
          const end = findHeaderEnd(combined);
          if (end === undefined) {
            if (combined.length >= MAX_HEADER_BYTES) {
              fail(badHeader('Content-Length header block too long'), events);
              break;
            }
            header = combined;
            pos += slice.length;
            continue;
          }
          pos += end.next - header.length;
          header = Buffer.alloc(0);
          const parsed = parseHeaderBlock(combined.toString('latin1', 0, end.start), max);
          if (typeof parsed !== 'number') {
            fail(parsed, events);
            break;
          }
          bodyLength = parsed;
          if (bodyLength === 0) {
            events.push({ kind: 'invalid', bytes: 0 });
            bodyLength = -1;
          }
          continue;
        }
        const take = Math.min(bodyLength - body.bytes, buf.length - pos);
        body.push(Buffer.from(buf.subarray(pos, pos + take)));
        pos += take;
        if (body.bytes === bodyLength) {
          events.push(parseJson(body.take()));
          bodyLength = -1;
        }
      }
      return events;
    },
  };
}

/**
 * Picks ndjson or contentLength from the first non-whitespace bytes of the stream (a
 * `Content-…:` header, or anything else, typically `{`), then decodes with it. Emits one
 * `detected` event before the first decoded event.
 */
export function createAutoDecoder(options: DecoderOptions = {}): MessageDecoder {
  let inner: MessageDecoder | undefined;
  let prefix: Buffer = Buffer.alloc(0);
  return {
    get failed() {
      return inner?.failed ?? false;
    },
    push(chunk) {
      if (inner) return inner.push(chunk);
      let buf = asBuffer(chunk);
      if (prefix.length === 0) buf = buf.subarray(skipWhitespace(buf, 0));
      if (buf.length === 0) return [];
      prefix = Buffer.concat([prefix, buf]);
      const framing = detectFraming(prefix);
      if (framing === undefined) return [];
      inner = framing === 'ndjson' ? createNdjsonDecoder(options) : createContentLengthDecoder(options);
      const buffered = prefix;
      prefix = Buffer.alloc(0);
      return [{ kind: 'detected', framing }, ...inner.push(buffered)];
    },
  };
}

/**
 * The framing that output starting with `prefix` (first non-whitespace byte first) uses, or
 * `undefined` while `prefix` is too short to tell (it is still a prefix of `content-<name>:`).
 */
export function detectFraming(prefix: Uint8Array): Framing | undefined {
  const head = asBuffer(prefix).toString('latin1', 0, DETECT_PREFIX_BYTES).toLowerCase();
  const marker = 'content-';
  if (head.length < marker.length) return marker.startsWith(head) ? undefined : 'ndjson';
  if (!head.startsWith(marker)) return 'ndjson';
  const rest = /^[a-z-]*[ \t]*(:)?/.exec(head.slice(marker.length));
  if (rest?.[1] === ':') return 'contentLength';
  const undecided = rest !== null && marker.length + rest[0].length === head.length;
  return undecided && head.length < DETECT_PREFIX_BYTES ? undefined : 'ndjson';
}

/** Serialises one message in the given framing. Throws on a value JSON cannot represent. */
export function encodeMessage(message: unknown, framing: Framing): Buffer {
  const json = stringify(message);
  if (framing === 'ndjson') return Buffer.from(`${json}\n`, 'utf8');
  const body = Buffer.from(json, 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'latin1'), body]);
}

/**
 * The Content-Length re-send of a message already sent as ndjson, shaped to be harmless to a
 * child that turns out to speak ndjson after all:
 * - a leading `\r\n` ends the ndjson line a Content-Length child may hold as a junk header line,
 *   so its parser meets `Content-Length` on a line of its own;
 * - the body (counted in Content-Length, legal JSON whitespace) breaks after the opening `{` and
 *   ends with `\n`, so an ndjson child sees only unparseable lines (`{`, `"jsonrpc":…}`) that it
 *   skips, instead of a second copy of the request, and no partial line is left to corrupt the
 *   next message.
 */
export function encodeContentLengthProbe(message: unknown): Buffer {
  const json = stringify(message);
  const body = Buffer.from(json.startsWith('{') ? `{\n${json.slice(1)}\n` : `${json}\n`, 'utf8');
  return Buffer.concat([Buffer.from(`\r\nContent-Length: ${body.length}\r\n\r\n`, 'latin1'), body]);
}

function decodeLine(line: Buffer, max: number): DecodeEvent | undefined {
  const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
  if (end > max) return tooLarge(max);
  const first = skipWhitespace(line.subarray(0, end), 0);
  if (first >= end) return undefined;
  const content = line.subarray(0, end);
  if (line[first] !== 0x7b && line[first] !== 0x5b) {
    // Not `{` or `[`: not meant as JSON-RPC at all.
    return { kind: 'noise', bytes: end, preview: content.toString('utf8', 0, NOISE_PREVIEW_BYTES) };
  }
  return parseJson(content);
}

function parseJson(bytes: Buffer): DecodeEvent {
  try {
    return { kind: 'message', value: JSON.parse(bytes.toString('utf8')) as unknown, bytes: bytes.length };
  } catch {
    // The SyntaxError quotes the input; only the size is reported.
    return { kind: 'invalid', bytes: bytes.length };
  }
}

/** Where the header block ends: `start` of the blank line's terminator, `next` after it. */
function findHeaderEnd(bytes: Buffer): { start: number; next: number } | undefined {
  const match = /\r?\n\r?\n/.exec(bytes.toString('latin1'));
  return match === null ? undefined : { start: match.index, next: match.index + match[0].length };
}

function parseHeaderBlock(text: string, max: number): number | (DecodeEvent & { kind: 'fatal' }) {
  let length: number | undefined;
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) return badHeader('malformed header line');
    if (line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
    const value = line.slice(colon + 1).trim();
    if (!/^\d{1,15}$/.test(value)) return badHeader('malformed Content-Length value');
    const parsed = Number(value);
    if (length !== undefined && length !== parsed) return badHeader('conflicting Content-Length headers');
    length = parsed;
  }
  if (length === undefined) return badHeader('header block without Content-Length');
  if (length > max) return tooLarge(max);
  return length;
}

function skipWhitespace(buf: Buffer, from: number): number {
  let i = from;
  while (i < buf.length) {
    const byte = buf[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) break;
    i++;
  }
  return i;
}

function stringify(message: unknown): string {
  const json = JSON.stringify(message);
  if (json === undefined) throw new TypeError('message is not representable as JSON');
  return json;
}

function tooLarge(max: number): DecodeEvent & { kind: 'fatal' } {
  return { kind: 'fatal', reason: 'too-large', message: `message larger than ${max} bytes` };
}

function badHeader(message: string): DecodeEvent & { kind: 'fatal' } {
  return { kind: 'fatal', reason: 'bad-header', message };
}

function maxBytesOf(options: DecoderOptions): number {
  const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isSafeInteger(max) || max <= 0) throw new TypeError('maxMessageBytes must be a positive integer');
  return max;
}
