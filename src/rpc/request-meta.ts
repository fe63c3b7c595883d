/**
 * A client request's `_meta`, as one value from where the request arrives to the upstream link
 * that forwards it. The inbound method table (inbound/method-table.ts) reads it once from the
 * request as the client sent it and freezes it; routing hands it on untouched,
 * and the link writes the upstream request's `_meta` from it in one step (`upstreamMeta`).
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { CLIENT_CAPABILITIES_META_KEY } from './client-capabilities.js';
import type { Era } from './era.js';

/** Every `_meta` field of one client request, as sent. Frozen: nothing on the way rebuilds it. */
export type RequestMeta = Readonly<Record<string, unknown>>;

/** The gateway's own init options (catalogue/surface/session-option.ts): for the gateway, never for upstreams. */
export const OPTIONS_META_KEY = 'portcullis/options';

/** Envelope keys of the 2026 revision; a 2025 upstream must not see them (it would answer 400). */
const ENVELOPE_PREFIX = 'io.modelcontextprotocol/';

/** `fields` as one request's meta, or undefined when there are none. */
export function requestMeta(fields: Record<string, unknown>): RequestMeta | undefined {
  return Object.keys(fields).length === 0 ? undefined : Object.freeze(fields);
}

/** The progress token the client asked its progress under, if any. */
export function progressTokenOf(meta: RequestMeta | undefined): string | number | undefined {
  const token = meta?.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

export interface UpstreamMetaOptions {
  /** The connection speaks 2026-07-28: the envelope goes with the request, with the client's capabilities. */
  era: Era;
  /** The requesting client's capabilities (sent per request to a 2026 upstream). */
  clientCapabilities: ClientCapabilities | undefined;
  /** The link's own token for this call (progress is mapped back to the client's). */
  progressToken: string | number | undefined;
  /**
   * The gateway's client span of this call (W3C Trace Context `traceparent`, `tracestate`):
   * replaces the client's own trace context; absent: the client's goes on as sent.
   */
  traceContext?: Readonly<Record<string, string>> | undefined;
}

const TRACE_KEYS = new Set(['traceparent', 'tracestate']);

/**
 * The `_meta` an upstream request carries: the client's fields without its progress token (the
 * link sends its own) and without the gateway's options, the gateway's trace context in place of
 * the client's when the call is traced; the 2026 envelope only to a 2026
 * upstream, whose capabilities key is the requesting client's (MCP 2026-07-28, "Request
 * Metadata": declared per request). Undefined when nothing is left.
 */
export function upstreamMeta(meta: RequestMeta | undefined, options: UpstreamMetaOptions): Record<string, unknown> | undefined {
  // Keys are the client's: copied as own properties (Object.fromEntries), so a key `__proto__`
  // is relayed like any other rather than replacing this object's prototype.
  const out: Record<string, unknown> = Object.fromEntries(
    Object.keys(meta ?? {})
      .filter((key) => key !== 'progressToken' && key !== OPTIONS_META_KEY)
      .filter((key) => options.era === '2026' || !key.startsWith(ENVELOPE_PREFIX))
      .filter((key) => options.traceContext === undefined || !TRACE_KEYS.has(key))
      .map((key) => [key, meta![key]]),
  );
  if (options.traceContext !== undefined) Object.assign(out, options.traceContext);
  if (options.era === '2026' && options.clientCapabilities !== undefined) out[CLIENT_CAPABILITIES_META_KEY] = options.clientCapabilities;
  if (options.progressToken !== undefined) out.progressToken = options.progressToken;
  return Object.keys(out).length === 0 ? undefined : out;
}
