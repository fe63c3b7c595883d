/**
 * Classifies what an upstream call failed with into the gateway taxonomy: a JSON-RPC error the
 * upstream answered is relayed as-is (`UpstreamRpcError`); transport trouble, timeouts and HTTP
 * statuses are the upstream's unavailability (`UpstreamError`), never the client's fault.
 */
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { GatewayError, UpstreamError, UpstreamRpcError, WireCode } from '../errors.js';
import type { Era } from '../rpc/era.js';

export function classifyUpstreamFailure(server: string, error: unknown, era: Era = '2025'): Error {
  if (error instanceof GatewayError || error instanceof UpstreamRpcError) return error;
  if (error instanceof ProtocolError) return new UpstreamRpcError(error.code, error.message, error.data);
  if (error instanceof SdkHttpError) {
    // A 2026 upstream answers an unknown method with HTTP 404 (no sessions there to expire), which
    // the SDK surfaces as an HTTP error: it is the upstream's -32601 (docs/decisions.md,
    // "Behaviours the code is built around").
    if (era === '2026' && error.status === 404) return new UpstreamRpcError(WireCode.MethodNotFound, 'Method not found');
    return new UpstreamError('UPSTREAM_UNAVAILABLE', server, `answered HTTP ${error.status}`, error);
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) {
      return new UpstreamError('UPSTREAM_TIMEOUT', server, 'did not answer in time', error);
    }
    if (error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected) {
      return new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'connection closed', error);
    }
    return new UpstreamError('UPSTREAM_UNAVAILABLE', server, `failed (${error.code})`, error);
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'request aborted', error);
  }
  return new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'failed', error);
}

/**
 * A short reason for a failure that is safe to log and show: an errno-style code, an SDK error
 * code or an HTTP status found along the cause chain — never a message, which may carry a URL,
 * a command line or a header value.
 */
export function safeReason(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (current instanceof SdkHttpError) return `HTTP ${current.status}`;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{2,40}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return 'unknown error';
}
