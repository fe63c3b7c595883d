/**
 * A hand-driven HTTP+SSE (MCP 2024-11-05) client with node:http, for what the SDK client hides:
 * the stream's exact events (the `endpoint` event first), the status of every POST, the stream
 * ending when the gateway ends the session. 127.0.0.1 only; the SSE parser here is deliberately
 * not the gateway's own.
 */
import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { rawRequest, type RawResponse } from './raw-http.js';
import { Changes, within } from './wait.js';

export interface WireEvent {
  type: string;
  data: string;
}

export interface RawSseStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Every event so far, in order. */
  readonly events: WireEvent[];
  /** The body so far, for answers that are not streams. */
  body(): string;
  /** True once the gateway ended the stream. */
  ended(): boolean;
  /** The `message` events parsed as JSON-RPC. */
  messages(): Array<Record<string, unknown>>;
  /** Resolves with what `check` returns once it is something, re-checked as events arrive (hang guard). */
  until<T>(check: () => T | undefined | false, what: string): Promise<T>;
  /** Resolves with the first message matching `match` (hang guard). */
  waitForMessage(match: (message: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>>;
  /** Hangs up (what a client that goes away does). */
  close(): void;
}

/** GETs `url` and keeps the answer open, parsing SSE events as they come. */
export function openRawSse(url: string, headers: Record<string, string> = {}): Promise<RawSseStream> {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1') throw new Error('openRawSse only talks to 127.0.0.1');
  const opened = new Promise<RawSseStream>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: target.port, path: `${target.pathname}${target.search}`, method: 'GET', headers: { accept: 'text/event-stream', ...headers } },
      (res: IncomingMessage) => resolve(sseStreamOf(req, res)),
    );
    req.on('error', reject);
    req.end();
  });
  return within(opened, 10_000, `GET ${target.pathname}`);
}

/** The answer `res` of request `req` read as an SSE stream as it arrives (its text kept too); `close` hangs up. */
export function sseStreamOf(req: ClientRequest, res: IncomingMessage): RawSseStream {
  const events: WireEvent[] = [];
  let text = '';
  let pending = '';
  let ended = false;
  const arrivals = new Changes();
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    text += chunk;
    pending += chunk;
    let cut: number;
    while ((cut = pending.indexOf('\n\n')) !== -1) {
      const block = pending.slice(0, cut);
      pending = pending.slice(cut + 2);
      let type = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) type = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) events.push({ type, data: data.join('\n') });
    }
    arrivals.changed();
  });
  const end = () => {
    ended = true;
    arrivals.changed();
  };
  res.on('end', end);
  res.on('close', end);
  res.on('error', end);
  const messages = () => events.filter((e) => e.type === 'message').map((e) => JSON.parse(e.data) as Record<string, unknown>);
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    events,
    body: () => text,
    ended: () => ended,
    messages,
    until: (check, what) => arrivals.until(check, what),
    waitForMessage: (match, what) => arrivals.until(() => messages().find(match), what),
    close: () => req.destroy(),
  };
}

/** The message URL the stream announced, made absolute against the stream's URL. */
export async function announcedEndpoint(stream: RawSseStream, sseUrl: string): Promise<string> {
  const event = await stream.until(() => stream.events[0], 'the endpoint event');
  if (event.type !== 'endpoint') throw new Error(`the first event is "${event.type}", not "endpoint"`);
  return new URL(event.data, sseUrl).href;
}

/** POSTs one JSON-RPC message (`jsonrpc` added) to an HTTP+SSE message URL. */
export function postMessage(url: string, message: Record<string, unknown>, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(url, { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', ...message }) });
}

/** The params of a 2024-11-05 client's `initialize`. */
export const INITIALIZE_2024 = {
  protocolVersion: '2024-11-05',
  capabilities: {},
  clientInfo: { name: 'raw-sse', version: '1.0.0' },
};

/** A raw HTTP+SSE session: stream open, `initialize` answered, `notifications/initialized` sent. */
export async function openRawSseSession(sseUrl: string, headers: Record<string, string> = {}) {
  const stream = await openRawSse(sseUrl, headers);
  if (stream.status !== 200) throw new Error(`GET ${sseUrl} answered HTTP ${stream.status}`);
  const endpoint = await announcedEndpoint(stream, sseUrl);
  const post = (message: Record<string, unknown>) => postMessage(endpoint, message, headers);
  const accepted = await post({ id: 'init', method: 'initialize', params: INITIALIZE_2024 });
  if (accepted.status !== 202) throw new Error(`initialize got HTTP ${accepted.status}`);
  await stream.waitForMessage((m) => m.id === 'init', 'the initialize result');
  await post({ method: 'notifications/initialized' });
  return { stream, endpoint, post };
}
