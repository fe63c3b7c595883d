/**
 * Reading a POST body once, bounded, before anything parses JSON-RPC: over the byte limit → 413
 * without reading the rest; not JSON → 415; invalid JSON → -32700; nested deeper than the limit
 * or a batch (MCP 2025-06-18 removed batching) → -32600. `JSON.parse` accepts a million nested
 * brackets while `JSON.stringify` throws at a few thousand, so depth is checked on the raw text
 * before parsing.
 *
 * The bytes come from the Node request when there is one (`incoming-body.ts`: no WHATWG stream is
 * built), otherwise from the Fetch `Request` (tests, `app.request()`); limits and outcomes are
 * the same either way.
 */
import { GatewayError } from '../errors.js';
import { isJsonContentType } from '../net/media-type.js';
import { readIncomingBounded, type IncomingBody } from './incoming-body.js';

export interface BodyLimits {
  maxBytes: number;
  maxDepth: number;
}

export const DEFAULT_BODY_LIMITS: BodyLimits = { maxBytes: 1024 * 1024, maxDepth: 64 };

export type BodyResult =
  | { ok: true; value: unknown }
  | { ok: false; error: GatewayError };

/** The deepest bracket nesting in JSON text, counting only brackets outside strings. */
export function jsonNestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) depth--;
  }
  return deepest;
}

export { isJsonContentType };

/** TextDecoder, not Buffer#toString: it drops a leading BOM, as it always did here. Stateless between calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: false });

/** A declared Content-Length over the limit: refused before a byte of the body is read. */
function declaredTooLarge(request: Request, maxBytes: number): boolean {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  return Number.isFinite(declared) && declared > maxBytes;
}

/** The body's chunks from the Fetch stream, or undefined once they add up to more than `maxBytes`. */
async function readStreamBounded(request: Request, maxBytes: number): Promise<Uint8Array[] | undefined> {
  if (request.body === null) return [];
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return chunks;
}

async function readBounded(request: Request, maxBytes: number, incoming: IncomingBody | undefined): Promise<string | undefined> {
  if (declaredTooLarge(request, maxBytes)) return undefined;
  const chunks = incoming === undefined ? await readStreamBounded(request, maxBytes) : await readIncomingBounded(incoming, maxBytes);
  if (chunks === undefined) return undefined;
  return UTF8.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
}

/**
 * Reads and checks a JSON-RPC POST body. `incoming`, the Node request under @hono/node-server,
 * is read instead of `request.body` when given; headers always come from `request`.
 */
export async function readJsonRpcBody(request: Request, limits: BodyLimits, incoming?: IncomingBody): Promise<BodyResult> {
  if (!isJsonContentType(request.headers.get('content-type'))) {
    return { ok: false, error: new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json') };
  }
  let text: string | undefined;
  try {
    text = await readBounded(request, limits.maxBytes, incoming);
  } catch {
    // The client hung up or sent broken chunking mid-body: its fault, nothing to log loudly.
    return { ok: false, error: new GatewayError('INVALID_REQUEST', 'request body could not be read') };
  }
  if (text === undefined) {
    return { ok: false, error: new GatewayError('BODY_TOO_LARGE', `Request body exceeds ${limits.maxBytes} bytes`) };
  }
  if (jsonNestingDepth(text) > limits.maxDepth) {
    return { ok: false, error: new GatewayError('INVALID_REQUEST', `JSON nested deeper than ${limits.maxDepth} levels`) };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: new GatewayError('PARSE_ERROR', 'Parse error: body is not valid JSON') };
  }
  if (Array.isArray(value)) {
    return { ok: false, error: new GatewayError('INVALID_REQUEST', 'JSON-RPC batches are not supported') };
  }
  if (typeof value !== 'object' || value === null) {
    return { ok: false, error: new GatewayError('INVALID_REQUEST', 'body must be a JSON-RPC message object') };
  }
  return { ok: true, value };
}
