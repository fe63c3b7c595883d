/**
 * Raw HTTP to the gateway with node:http, so the Host header, the method and the body bytes are
 * exactly what a test says, plus a 2025-era session driven by hand for what the SDK client hides
 * (its own progress tokens, a session id after DELETE). 127.0.0.1 only.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { within } from './wait.js';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  json(): { jsonrpc?: string; id?: unknown; error?: { code: number; message: string }; result?: unknown };
}

/** One HTTP request; `headers` are sent as given (node:http adds Host from the URL unless given). */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1') throw new Error('rawRequest only talks to 127.0.0.1');
  const method = options.method ?? 'POST';
  const exchange = new Promise<RawResponse>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: target.port, path: `${target.pathname}${target.search}`, method, headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
        res.on('error', reject);
      },
    );
    // The server may answer (413) and close before the whole body is written.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    req.end(options.body);
  });
  return within(exchange, 10_000, `${method} ${target.pathname}`);
}

/** Headers a Streamable HTTP client sends on a POST. */
export const MCP_POST_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A 2025-era `initialize` request body. */
export function initializeBody(id: number | string = 1): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
  });
}

/** The JSON-RPC messages of a response: the `data:` lines of an SSE body, or the one JSON body. */
export function messagesOf(response: RawResponse): Array<Record<string, unknown>> {
  if (String(response.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    return response.body
      .split('\n')
      .filter((line) => line.startsWith('data:') && line.slice(5).trim() !== '')
      .map((line) => JSON.parse(line.slice(5)) as Record<string, unknown>);
  }
  return response.body === '' ? [] : [JSON.parse(response.body) as Record<string, unknown>];
}

/** A 2025-era session driven with raw HTTP. */
export interface RawSession {
  readonly id: string;
  /** POSTs one JSON-RPC message (`jsonrpc` added) in the session; SSE answers are read to their end. */
  post(message: Record<string, unknown>): Promise<RawResponse>;
  /** Ends the session (HTTP DELETE). */
  delete(): Promise<RawResponse>;
}

/** Opens a 2025-era session with `initialize` + `notifications/initialized` over raw HTTP. */
export async function openRawSession(url: string): Promise<RawSession> {
  const init = await rawRequest(url, { headers: { ...MCP_POST_HEADERS }, body: initializeBody() });
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof id !== 'string') throw new Error(`initialize failed with HTTP ${init.status}`);
  const version = (messagesOf(init)[0]?.result as { protocolVersion?: string } | undefined)?.protocolVersion ?? '2025-11-25';
  const sessionHeaders = { 'mcp-session-id': id, 'mcp-protocol-version': version };
  const post = (message: Record<string, unknown>) =>
    rawRequest(url, { headers: { ...MCP_POST_HEADERS, ...sessionHeaders }, body: JSON.stringify({ jsonrpc: '2.0', ...message }) });
  const initialized = await post({ method: 'notifications/initialized' });
  if (initialized.status !== 202) throw new Error(`notifications/initialized got HTTP ${initialized.status}`);
  return { id, post, delete: () => rawRequest(url, { method: 'DELETE', headers: sessionHeaders }) };
}
