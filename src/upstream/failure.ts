/**
 * Classifies what an upstream call failed with into the gateway taxonomy: a JSON-RPC error the
 * upstream answered is relayed as-is (`UpstreamRpcError`, peer.ts); the gateway's own refusals,
 * transport trouble, timeouts and HTTP statuses (`UpstreamError`, `UpstreamHttpError`: the
 * upstream links are the gateway's own and fail with nothing else) are the upstream's
 * unavailability, never the client's fault.
 */
import { GatewayError, UpstreamError, UpstreamHttpError, UpstreamRpcError, WireCode } from '../errors.js';
import type { Era } from '../rpc/era.js';

export function classifyUpstreamFailure(server: string, error: unknown, era: Era = '2025'): Error {
  // A 2026 upstream answers an unknown method with HTTP 404 (no sessions there to expire): it is
  // the upstream's -32601 (docs/decisions.md, "Behaviours the code is built around").
  if (error instanceof UpstreamHttpError && era === '2026' && error.status === 404) return new UpstreamRpcError(WireCode.MethodNotFound, 'Method not found');
  if (error instanceof GatewayError || error instanceof UpstreamRpcError) return error;
  if (error instanceof Error && error.name === 'AbortError') {
    return new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'request aborted', error);
  }
  return new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'failed', error);
}

/**
 * A short reason for a failure that is safe to log and show: an HTTP status or an errno-style
 * code found along the cause chain — never a message, which may carry a URL, a command line or a
 * header value.
 */
export function safeReason(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (current instanceof UpstreamHttpError) return `HTTP ${current.status}`;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{2,40}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return 'unknown error';
}
