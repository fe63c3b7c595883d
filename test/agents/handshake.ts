/**
 * Handshakes driven with raw HTTP, for what the SDK client keeps to itself (the result's `_meta`,
 * a refused `initialize`): a 2025 `initialize` and a 2026 `server/discover`, each optionally
 * carrying `_meta["portcullis/options"]`. 127.0.0.1 only (raw-http.ts refuses anything else).
 */
import { MODERN_VERSION } from '../integration/harness/paths.js';
import { MCP_POST_HEADERS, messagesOf, rawRequest, type RawResponse } from '../integration/harness/raw-http.js';
import type { Cleanup } from '../integration/harness/wait.js';

export interface Handshake {
  response: RawResponse;
  result?: { instructions?: string; serverInfo?: { name: string }; _meta?: Record<string, unknown> };
  error?: { code: number; message: string };
  /** 2025 only: a session to post more requests in (undefined when refused). */
  post?: (message: Record<string, unknown>) => Promise<Record<string, unknown> | undefined>;
}

function answerOf(response: RawResponse): Pick<Handshake, 'result' | 'error'> {
  const message = messagesOf(response).at(-1) as { result?: Handshake['result']; error?: Handshake['error'] } | undefined;
  return { ...(message?.result === undefined ? {} : { result: message.result }), ...(message?.error === undefined ? {} : { error: message.error }) };
}

/** A 2025 `initialize` (then `notifications/initialized`); the session is ended by `cleanup`. */
export async function initialize2025(cleanup: Cleanup, url: string, options?: unknown): Promise<Handshake> {
  const params = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' }, ...(options === undefined ? {} : { _meta: { 'portcullis/options': options } }) };
  const response = await rawRequest(url, { headers: { ...MCP_POST_HEADERS }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params }) });
  const id = response.headers['mcp-session-id'];
  if (typeof id !== 'string') return { response, ...answerOf(response) };
  const headers = { ...MCP_POST_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
  cleanup.add(() => rawRequest(url, { method: 'DELETE', headers: { 'mcp-session-id': id } }).then(() => undefined));
  await rawRequest(url, { headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  let next = 2;
  const post = async (message: Record<string, unknown>) =>
    messagesOf(await rawRequest(url, { headers, body: JSON.stringify({ jsonrpc: '2.0', id: next++, ...message }) })).at(-1);
  return { response, ...answerOf(response), post };
}

/** One 2026 request with the per-request envelope, `_meta["portcullis/options"]` when given. */
export async function modern(url: string, method: string, params: Record<string, unknown> = {}, options?: unknown): Promise<Handshake> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
    ...(options === undefined ? {} : { 'portcullis/options': options }),
  };
  const name = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
  const response = await rawRequest(url, {
    headers: { ...MCP_POST_HEADERS, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method, ...name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
  });
  return { response, ...answerOf(response) };
}
