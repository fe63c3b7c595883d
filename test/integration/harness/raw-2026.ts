/**
 * A 2026-07-28 request sent by hand with node:http, for what the SDK client hides: the exact
 * bytes, the answer read as it arrives (JSON or SSE), and a hang-up at any moment — before the
 * answer's head (a JSON answer still pending), mid-stream, or on a listen. 127.0.0.1 only.
 */
import { request as httpRequest } from 'node:http';
import { sseStreamOf, type RawSseStream } from './raw-sse.js';
import { within } from './wait.js';

export const VERSION_2026 = '2026-07-28';

/** The per-request `_meta` envelope of a 2026-07-28 request (`extra` merged in, e.g. a progress token). */
export function envelope2026(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': VERSION_2026,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
    ...extra,
  };
}

/** The body field `Mcp-Name` mirrors (SEP-2243). */
const NAME_FIELD: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/** The standard headers of a well-formed 2026 request `method` with `params`. */
export function headers2026(method: string, params: Record<string, unknown> = {}): Record<string, string> {
  const field = NAME_FIELD[method];
  const name = field === undefined ? undefined : params[field];
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': VERSION_2026,
    'mcp-method': method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
  };
}

/** One 2026 request `{ id, method, params }` (the envelope added to `params._meta` unless `meta` is given). */
export function request2026(id: string | number, method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = envelope2026()) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } };
}

export interface Exchange {
  /** The answer once its head arrived, its body read as it comes (hang guard 15 s). */
  readonly answer: Promise<RawSseStream>;
  /** Hangs up now, whether or not the answer's head has arrived. */
  hangUp(): void;
}

/** POSTs `body` to `url` with `headers`; the exchange stays open until the gateway ends it or {@link Exchange.hangUp}. */
export function post(url: string, body: unknown, headers: Record<string, string>): Exchange {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1') throw new Error('post only talks to 127.0.0.1');
  // A connection of its own (no keep-alive pool): a hang-up ends exactly this exchange, and no later
  // request meets a socket the gateway closed after a cut answer.
  const req = httpRequest({ host: '127.0.0.1', port: target.port, path: `${target.pathname}${target.search}`, method: 'POST', headers, agent: false });
  const answer = new Promise<RawSseStream>((resolve, reject) => {
    req.on('response', (res) => resolve(sseStreamOf(req, res)));
    req.on('error', reject);
  });
  const guarded = within(answer, 15_000, `POST ${target.pathname}`);
  // A hang-up before the head rejects the answer; nobody need wait for it then.
  guarded.catch(() => undefined);
  req.end(typeof body === 'string' ? body : JSON.stringify(body));
  return { answer: guarded, hangUp: () => req.destroy() };
}

/** The JSON-RPC messages of an answer read to its end: the one JSON body, or the SSE `message` events. */
export async function messagesOfAnswer(stream: RawSseStream): Promise<Array<Record<string, unknown>>> {
  await stream.until(() => stream.ended(), 'the answer to end');
  if (String(stream.headers['content-type'] ?? '').startsWith('text/event-stream')) return stream.messages();
  return stream.body() === '' ? [] : [JSON.parse(stream.body()) as Record<string, unknown>];
}
