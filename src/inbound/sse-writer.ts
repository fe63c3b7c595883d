/**
 * One open SSE response of a session transport: events written as they come, `: keepalive`
 * comments while open, and, during a `Last-Event-ID` replay, live events held back until the
 * replay is done (ids the replay already sent are skipped). Closed by its owner, by the client
 * going away, or when nobody ever reads it.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

/** The headers of every SSE answer (no caching or buffering by intermediaries). */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/**
 * Unread bytes one SSE answer may hold before it is cut: twice the default per-message cap
 * (policy `limits.maxUpstreamMessageBytes`, 16 MiB), so one message of the largest size still
 * fits while the one before drains.
 */
export const MAX_UNREAD_BYTES = 32 * 1024 * 1024;

/** The SDK's interval for `: keepalive` comments on open streams. */
const KEEP_ALIVE_MS = 15_000;

/**
 * An SSE answer nobody started reading after this long is closed. The HTTP server takes a reader
 * as soon as it writes the response; it never does when the client left first (@hono/node-server
 * returns early on a destroyed socket, and the body is never cancelled either), and such a
 * writer would otherwise hold its stream's slot (409 for every later GET) and keep the session
 * from idling out.
 */
const UNREAD_CLOSE_MS = 10_000;

const encoder = new TextEncoder();

/** A response body that knows whether anything took a reader on it. */
class WatchedStream extends ReadableStream<Uint8Array> {
  taken = false;

  override getReader(options?: { mode?: 'byob' }): never {
    this.taken = true;
    return super.getReader(options as never) as never;
  }
}

/** One open SSE response. */
export class SseWriter {
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private keepAlive: NodeJS.Timeout | undefined;
  closed = false;
  /** While a replay runs, live events wait here. */
  private buffer: Array<{ message: JSONRPCMessage; id: string | undefined }> | undefined;
  /** Ids the replay sent: skipped if they come by live too. */
  private replayed: Set<string> | undefined;
  private closeWhenReplayed = false;
  readonly body: WatchedStream;
  private readonly unread: NodeJS.Timeout;

  constructor(private readonly onGone: (writer: SseWriter) => void) {
    // Nothing pulls: the byte strategy only measures what waits unread (`backlogBytes`).
    this.body = new WatchedStream(
      {
        start: (controller) => {
          this.controller = controller;
        },
        cancel: () => this.gone(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
    );
    this.unread = setTimeout(() => {
      if (!this.body.taken) this.close();
    }, UNREAD_CLOSE_MS);
    this.unread.unref();
  }

  startKeepAlive(): void {
    if (this.closed) return;
    this.keepAlive = setInterval(() => this.enqueue(': keepalive\n\n'), KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  beginReplay(): void {
    this.buffer = [];
    this.replayed = new Set();
  }

  replay(id: string, message: JSONRPCMessage): void {
    this.replayed?.add(id);
    this.enqueue(sseEvent(message, id));
  }

  /** Sends what arrived during the replay and goes live. */
  endReplay(): void {
    const waiting = this.buffer ?? [];
    this.buffer = undefined;
    for (const { message, id } of waiting) this.event(message, id);
    if (this.closeWhenReplayed) this.close();
  }

  event(message: JSONRPCMessage, id: string | undefined): void {
    if (this.buffer !== undefined) this.buffer.push({ message, id });
    else if (id === undefined || this.replayed?.has(id) !== true) this.enqueue(sseEvent(message, id));
  }

  /** An event of another type than `message`, e.g. HTTP+SSE's `endpoint`; `data` is one line. */
  named(type: string, data: string): void {
    if (/[\r\n]/.test(type) || /[\r\n]/.test(data)) throw new TypeError('SSE event type and data must be single lines');
    this.enqueue(`event: ${type}\ndata: ${data}\n\n`);
  }

  priming(id: string, retryMs: number | undefined): void {
    this.enqueue(retryMs === undefined ? `id: ${id}\ndata: \n\n` : `id: ${id}\nretry: ${retryMs}\ndata: \n\n`);
  }

  /** Bytes written that the HTTP server has not taken yet (it takes them as the client reads). */
  get backlogBytes(): number {
    return this.closed ? 0 : Math.max(0, -(this.controller.desiredSize ?? 0));
  }

  /** Ends the answer at once, dropping what the client has not read (the connection is cut). */
  abort(): void {
    if (this.closed) return;
    try {
      this.controller.error(new Error('SSE answer aborted'));
    } catch {
      // Already errored or cancelled by the client.
    }
    this.gone();
  }

  close(): void {
    if (this.buffer !== undefined) {
      this.closeWhenReplayed = true;
      return;
    }
    if (this.closed) return;
    try {
      this.controller.close();
    } catch {
      // Already errored or cancelled by the client.
    }
    this.gone();
  }

  private enqueue(text: string): void {
    if (this.closed) return;
    try {
      this.controller.enqueue(encoder.encode(text));
    } catch {
      this.gone();
    }
  }

  private gone(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.unread);
    if (this.keepAlive !== undefined) clearInterval(this.keepAlive);
    this.onGone(this);
  }
}

function sseEvent(message: JSONRPCMessage, id: string | undefined): string {
  return id === undefined ? `event: message\ndata: ${JSON.stringify(message)}\n\n` : `event: message\nid: ${id}\ndata: ${JSON.stringify(message)}\n\n`;
}
