/**
 * A hand-driven 2025-era client for the resumability tests: raw `fetch` to the gateway on
 * 127.0.0.1, SSE parsed here, connections cut by aborting the response, resumed with
 * `Last-Event-ID`. What the SDK client hides (when a cut happens, which id it resumes from, what
 * status a resume gets) is exactly what these tests need to control and see.
 */

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  retry?: number;
}

/** A JSON-RPC message as it arrives (loosely typed: the tests inspect fields). */
export interface WireMessage {
  id?: number | string;
  method?: string;
  params?: { data?: { label?: string; seq?: number } } & Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
}

const PROTOCOL_VERSION = '2025-11-25';

function assertLoopback(url: string): void {
  if (new URL(url).hostname !== '127.0.0.1') throw new Error('the SSE test client only talks to 127.0.0.1');
}

/** Reads SSE events from `body` until it ends or `onEvent` returns false (then the read stops). */
export async function readSse(body: ReadableStream<Uint8Array>, onEvent: (event: SseEvent) => boolean): Promise<'ended' | 'stopped'> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let current: SseEvent = { data: '' };
  let dataLines: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return 'ended';
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line === '') {
          if (dataLines.length > 0 || current.id !== undefined) {
            current.data = dataLines.join('\n');
            const keepGoing = onEvent(current);
            current = { data: '' };
            dataLines = [];
            if (!keepGoing) return 'stopped';
          }
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value_ = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') dataLines.push(value_);
        else if (field === 'id') current.id = value_;
        else if (field === 'event') current.event = value_;
        else if (field === 'retry') current.retry = Number(value_);
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** A 2025-era session opened with raw HTTP. */
export class RawSseSession {
  private constructor(
    readonly url: string,
    readonly sessionId: string,
  ) {}

  static async open(url: string): Promise<RawSseSession> {
    assertLoopback(url);
    const init = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'sse-chaos', version: '1.0.0' } },
      }),
    });
    const sessionId = init.headers.get('mcp-session-id');
    await init.text();
    if (init.status !== 200 || sessionId === null) throw new Error(`initialize failed with HTTP ${init.status}`);
    const session = new RawSseSession(url, sessionId);
    const initialized = await session.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await initialized.text();
    if (initialized.status !== 202) throw new Error(`notifications/initialized got HTTP ${initialized.status}`);
    return session;
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': PROTOCOL_VERSION, ...extra };
  }

  /** POSTs one JSON-RPC message; the response is returned unread. */
  post(message: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
    return fetch(this.url, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
      body: JSON.stringify(message),
      signal,
    });
  }

  /** Sends a request and returns the messages of its response (one JSON body, or SSE read to its end). */
  async request(id: number, method: string, params: Record<string, unknown> = {}): Promise<WireMessage[]> {
    const response = await this.post({ jsonrpc: '2.0', id, method, params });
    if (response.body === null) throw new Error(`${method} got no body (HTTP ${response.status})`);
    if ((response.headers.get('content-type') ?? '').startsWith('application/json')) return [(await response.json()) as WireMessage];
    const messages: WireMessage[] = [];
    await readSse(response.body, (event) => {
      if (event.data.trim() !== '') messages.push(JSON.parse(event.data) as WireMessage);
      return true;
    });
    return messages;
  }

  /** A GET resuming after `lastEventId`; the response is returned unread. */
  resume(lastEventId: string, signal?: AbortSignal): Promise<Response> {
    return fetch(this.url, { method: 'GET', headers: this.headers({ accept: 'text/event-stream', 'last-event-id': lastEventId }), signal });
  }

  async delete(): Promise<void> {
    const response = await fetch(this.url, { method: 'DELETE', headers: this.headers({}) });
    await response.text();
  }
}
