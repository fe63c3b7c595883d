/**
 * A bare MCP client over `fetch`, just enough to drive load. 2025 era: the initialize +
 * notifications/initialized handshake (capturing `Mcp-Session-Id`), single requests whose answer
 * may be a JSON body or an SSE stream, and DELETE to end a session. 2026 era (2026-07-28): no
 * session; a `server/discover` probe, then every request carries its `_meta` envelope and the
 * standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`). No SDK client on purpose:
 * the bench must not measure its own client library.
 */

/** The revision the bench's 2025-era clients ask for: the latest 2025-era one. */
export const BENCH_PROTOCOL_VERSION = '2025-11-25';

/** The revision the bench's 2026-era clients speak. */
export const BENCH_2026_VERSION = '2026-07-28';

/** The per-request `_meta` envelope of a 2026-07-28 request (MCP 2026-07-28, "Request Metadata"). */
const ENVELOPE_2026 = {
  'io.modelcontextprotocol/protocolVersion': BENCH_2026_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'portcullis-bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The `Mcp-Name` a 2026 request of `method` mirrors from its params (SEP-2243), if any. */
function mirroredName(method: string, params: Record<string, unknown>): string | undefined {
  const field = method === 'tools/call' || method === 'prompts/get' ? 'name' : method === 'resources/read' ? 'uri' : undefined;
  const value = field === undefined ? undefined : params[field];
  return typeof value === 'string' ? value : undefined;
}

/** The headers of one 2026 request of `method` (the session's, plus `Mcp-Method` and `Mcp-Name`). */
export function requestHeaders(session: McpSession, method: string, params: Record<string, unknown> = {}): Record<string, string> {
  if (session.era === '2025') return { ...session.headers };
  const name = mirroredName(method, params);
  return { ...session.headers, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) };
}

/** `params` as a request of the session's era carries them (a 2026 request: with its envelope). */
function eraParams(session: Pick<McpSession, 'era'>, params: Record<string, unknown>): Record<string, unknown> {
  return session.era === '2025' ? params : { ...params, _meta: ENVELOPE_2026 };
}

export interface McpSession {
  readonly url: string;
  /** The client's protocol era; a 2026 "session" is only the headers every request carries. */
  readonly era: '2025' | '2026';
  /** Undefined when the server is stateless (no session header returned). */
  readonly sessionId: string | undefined;
  readonly protocolVersion: string;
  /** Headers every request of this session carries. */
  readonly headers: Readonly<Record<string, string>>;
}

export class RpcError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let nextId = 1;

/** Extracts the JSON-RPC response with `id` from a JSON or SSE body. */
export function findResponse(contentType: string, text: string, id: string | number): Record<string, unknown> | undefined {
  const candidates: string[] = [];
  if (contentType.includes('text/event-stream')) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data.length > 0) candidates.push(data);
    }
  } else if (text.length > 0) {
    candidates.push(text);
  }
  for (const candidate of candidates) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate);
    } catch {
      continue;
    }
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      if (typeof message === 'object' && message !== null && (message as { id?: unknown }).id === id) {
        return message as Record<string, unknown>;
      }
    }
  }
  return undefined;
}

async function post(url: string, headers: Record<string, string>, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: signal ?? AbortSignal.timeout(15_000) });
}

/** Sends one request and returns its `result`; throws `RpcError` on an HTTP or JSON-RPC error. */
export async function rpc(session: McpSession, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const id = `bench-${nextId++}`;
  const response = await post(session.url, requestHeaders(session, method, params), { jsonrpc: '2.0', id, method, params: eraParams(session, params) });
  const text = await response.text();
  if (!response.ok) throw new RpcError(`${method}: HTTP ${response.status}`, response.status);
  const message = findResponse(response.headers.get('content-type') ?? '', text, id);
  if (message === undefined) throw new RpcError(`${method}: no response with id ${id}`, response.status);
  if (message.error !== undefined) throw new RpcError(`${method}: ${JSON.stringify(message.error)}`, response.status);
  return (message.result ?? {}) as Record<string, unknown>;
}

/**
 * Opens a client of `era`: a 2025-era session (initialize, then notifications/initialized), or a
 * 2026-era client whose `server/discover` was answered naming 2026-07-28.
 */
export async function openSession(url: string, signal?: AbortSignal, era: '2025' | '2026' = '2025'): Promise<McpSession> {
  if (era === '2026') {
    const client: McpSession = { url, era, sessionId: undefined, protocolVersion: BENCH_2026_VERSION, headers: { ...BASE_HEADERS, 'mcp-protocol-version': BENCH_2026_VERSION } };
    const discovered = await rpc(client, 'server/discover');
    if (!(discovered.supportedVersions as unknown[] | undefined)?.includes(BENCH_2026_VERSION)) throw new RpcError('server/discover: 2026-07-28 not served', 200);
    return client;
  }
  const id = `bench-${nextId++}`;
  const response = await post(
    url,
    BASE_HEADERS,
    {
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: BENCH_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'portcullis-bench', version: '1.0.0' } },
    },
    signal,
  );
  const text = await response.text();
  if (!response.ok) throw new RpcError(`initialize: HTTP ${response.status}`, response.status);
  const message = findResponse(response.headers.get('content-type') ?? '', text, id);
  const result = message?.result as { protocolVersion?: unknown } | undefined;
  if (typeof result?.protocolVersion !== 'string') throw new RpcError('initialize: no result', response.status);
  const sessionId = response.headers.get('mcp-session-id') ?? undefined;
  const headers: Record<string, string> = { ...BASE_HEADERS, 'mcp-protocol-version': result.protocolVersion };
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
  const initialized = await post(url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' }, signal);
  await initialized.arrayBuffer();
  if (!initialized.ok) throw new RpcError(`notifications/initialized: HTTP ${initialized.status}`, initialized.status);
  return { url, era, sessionId, protocolVersion: result.protocolVersion, headers };
}

/** Ends a session with DELETE (best effort: a server may not support it). */
export async function closeSession(session: McpSession): Promise<void> {
  if (session.sessionId === undefined) return;
  try {
    const response = await fetch(session.url, { method: 'DELETE', headers: { ...session.headers }, signal: AbortSignal.timeout(5_000) });
    await response.arrayBuffer();
  } catch {
    // The process is stopped afterwards anyway.
  }
}

/** The body of one `tools/call` of the echo tool by a client of `era`; `[<id>]` is replaced per request by autocannon. */
export function echoCallBody(toolName: string, era: '2025' | '2026' = '2025'): string {
  return JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: eraParams({ era }, { name: toolName, arguments: { text: 'hello' } }) });
}

/** The body of one `tools/list`, id replaced per request. */
export function toolsListBody(): string {
  return JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/list', params: {} });
}
