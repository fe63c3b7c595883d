/**
 * The one error taxonomy of Portcullis.
 *
 * Every error the gateway raises on purpose is a `GatewayError` with a stable machine `code`
 * (never parse messages). `toJsonRpcError` / `httpStatusFor` are the one place that maps an error
 * to what a client sees. Messages must never contain secrets: header values, env-sourced values,
 * tokens, commands or URLs (docs/decisions.md, "Errors").
 */

/** JSON-RPC 2.0 and MCP wire error codes (kept apart from local error codes). */
export const WireCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP: resource not found (SEP-2164 uses -32602 in 2026; 2025 servers used -32002). */
  ResourceNotFound: -32002,
  /** Implementation-defined server error range (-32000 … -32099). */
  UpstreamUnavailable: -32001,
  ConnectionClosed: -32000,
  /** MCP 2026-07-28: the request needs a capability the client did not declare. */
  MissingRequiredClientCapability: -32021,
} as const;

export type GatewayErrorCode =
  | 'CONFIG_INVALID'
  | 'CONFIG_UNREADABLE'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UPSTREAM_START_FAILED'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_BLOCKED'
  | 'UPSTREAM_BUSY'
  | 'UPSTREAM_MESSAGE_TOO_LARGE'
  | 'UNKNOWN_TOOL'
  | 'UNKNOWN_PROMPT'
  | 'UNKNOWN_RESOURCE'
  | 'UNKNOWN_SERVER'
  | 'UNATTRIBUTABLE'
  | 'CLIENT_CAPABILITY_MISSING'
  | 'CLIENT_FEATURE_MISSING'
  | 'DUPLICATE_REQUEST_ID'
  | 'NOT_SUPPORTED'
  | 'SESSION_NOT_FOUND'
  | 'SESSION_LIMIT'
  | 'PRINCIPAL_SESSION_LIMIT'
  | 'RATE_LIMITED'
  | 'SESSION_CHILD_LIMIT'
  | 'PRINCIPAL_CONNECTION_LIMIT'
  | 'UNKNOWN_TASK'
  | 'TASK_LIMIT'
  | 'MISSING_CLIENT_CAPABILITY'
  | 'INVALID_REQUEST'
  | 'INVALID_PARAMS'
  | 'BIND_REFUSED'
  | 'LISTEN_FAILED'
  | 'STARTING'
  | 'SHUTTING_DOWN'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_IMPLEMENTED'
  | 'WATCH_LIMIT';

export interface GatewayErrorOptions {
  /** Upstream server name, when the error concerns one. Safe to show (it is a config key). */
  server?: string;
  /** When a refused request may be retried (sent as `Retry-After` when answered over HTTP). */
  retryAfterMs?: number;
  /** Extra fields for the JSON-RPC error's `data` (e.g. `requiredCapabilities` of -32021). */
  data?: Record<string, unknown>;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly server: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: GatewayErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.server = options.server;
    this.retryAfterMs = options.retryAfterMs;
    this.data = options.data;
  }
}

/** A configuration problem; `problems` lists every diagnostic, each naming server and field. */
export class ConfigError extends GatewayError {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super('CONFIG_INVALID', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** An upstream could not serve a request. Never the client's fault: maps to -32001 / 502. */
export class UpstreamError extends GatewayError {
  constructor(
    code: Extract<GatewayErrorCode, `UPSTREAM_${string}`>,
    server: string,
    message: string,
    cause?: unknown,
  ) {
    super(code, `upstream "${server}": ${message}`, { server, cause });
    this.name = 'UpstreamError';
  }
}

/** An error the upstream server itself answered with (a JSON-RPC error): relayed as-is. */
export class UpstreamRpcError extends Error {
  readonly rpcCode: number;
  readonly data: unknown;

  constructor(rpcCode: number, message: string, data?: unknown) {
    super(message);
    this.name = 'UpstreamRpcError';
    this.rpcCode = rpcCode;
    this.data = data;
  }
}

export interface JsonRpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

const wireCodeByGatewayCode: Record<GatewayErrorCode, number> = {
  CONFIG_INVALID: WireCode.InternalError,
  CONFIG_UNREADABLE: WireCode.InternalError,
  UPSTREAM_UNAVAILABLE: WireCode.UpstreamUnavailable,
  UPSTREAM_START_FAILED: WireCode.UpstreamUnavailable,
  UPSTREAM_TIMEOUT: WireCode.UpstreamUnavailable,
  UPSTREAM_BLOCKED: WireCode.UpstreamUnavailable,
  UPSTREAM_BUSY: WireCode.UpstreamUnavailable,
  UPSTREAM_MESSAGE_TOO_LARGE: WireCode.UpstreamUnavailable,
  UNKNOWN_TOOL: WireCode.InvalidParams,
  UNKNOWN_PROMPT: WireCode.InvalidParams,
  UNKNOWN_RESOURCE: WireCode.ResourceNotFound,
  UNKNOWN_SERVER: WireCode.InvalidParams,
  UNATTRIBUTABLE: WireCode.InternalError,
  // A server→client request the client did not declare: what the client would answer itself.
  CLIENT_CAPABILITY_MISSING: WireCode.MethodNotFound,
  CLIENT_FEATURE_MISSING: WireCode.InvalidParams,
  DUPLICATE_REQUEST_ID: WireCode.InvalidRequest,
  NOT_SUPPORTED: WireCode.MethodNotFound,
  SESSION_NOT_FOUND: WireCode.InvalidRequest,
  SESSION_LIMIT: WireCode.InternalError,
  PRINCIPAL_SESSION_LIMIT: WireCode.InvalidRequest,
  RATE_LIMITED: WireCode.InvalidRequest,
  SESSION_CHILD_LIMIT: WireCode.UpstreamUnavailable,
  PRINCIPAL_CONNECTION_LIMIT: WireCode.UpstreamUnavailable,
  UNKNOWN_TASK: WireCode.InvalidParams,
  TASK_LIMIT: WireCode.InvalidRequest,
  MISSING_CLIENT_CAPABILITY: WireCode.MissingRequiredClientCapability,
  INVALID_REQUEST: WireCode.InvalidRequest,
  INVALID_PARAMS: WireCode.InvalidParams,
  BIND_REFUSED: WireCode.InternalError,
  LISTEN_FAILED: WireCode.InternalError,
  STARTING: WireCode.UpstreamUnavailable,
  SHUTTING_DOWN: WireCode.UpstreamUnavailable,
  METHOD_NOT_ALLOWED: WireCode.InvalidRequest,
  NOT_IMPLEMENTED: WireCode.InternalError,
  WATCH_LIMIT: WireCode.InternalError,
};

const httpStatusByGatewayCode: Partial<Record<GatewayErrorCode, number>> = {
  SESSION_NOT_FOUND: 404,
  SESSION_LIMIT: 503,
  PRINCIPAL_SESSION_LIMIT: 429,
  RATE_LIMITED: 429,
  SESSION_CHILD_LIMIT: 503,
  PRINCIPAL_CONNECTION_LIMIT: 503,
  INVALID_REQUEST: 400,
  INVALID_PARAMS: 400,
  DUPLICATE_REQUEST_ID: 400,
  SHUTTING_DOWN: 503,
  METHOD_NOT_ALLOWED: 405,
  NOT_IMPLEMENTED: 501,
  WATCH_LIMIT: 503,
  STARTING: 503,
};

/**
 * The one mapping from any thrown value to the JSON-RPC error a client sees. Unknown errors
 * become a generic internal error: their messages may carry details we did not vet.
 */
export function toJsonRpcError(error: unknown): JsonRpcErrorBody {
  if (error instanceof UpstreamRpcError) {
    return error.data === undefined
      ? { code: error.rpcCode, message: error.message }
      : { code: error.rpcCode, message: error.message, data: error.data };
  }
  if (error instanceof GatewayError) {
    return { code: wireCodeByGatewayCode[error.code], message: error.message, data: { ...error.data, code: error.code } };
  }
  return { code: WireCode.InternalError, message: 'internal gateway error' };
}

/** HTTP status for an error answered outside a JSON-RPC stream (edge rejections, session lookups). */
export function httpStatusFor(error: unknown): number {
  if (error instanceof GatewayError) return httpStatusByGatewayCode[error.code] ?? 500;
  return 500;
}

/**
 * A JSON-RPC error response body without an `id` (edge rejections happen before an id is known;
 * MCP 2025-11-25 makes `id` optional on error responses for exactly this case).
 */
export function jsonRpcErrorBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message } });
}

/** An HTTP response carrying `jsonRpcErrorBody`: how every edge refusal is answered. */
export function jsonRpcErrorResponse(status: number, code: number, message: string): Response {
  return new Response(jsonRpcErrorBody(code, message), { status, headers: { 'content-type': 'application/json' } });
}

/**
 * The HTTP answer to a request refused outside any JSON-RPC stream (a session that cannot be
 * opened): the status `httpStatusFor` gives, the JSON-RPC error `toJsonRpcError` gives (without
 * an `id`, as `jsonRpcErrorBody`), and `Retry-After` in whole seconds when the error says when
 * to retry (RFC 9110 §10.2.3).
 */
export function errorResponse(error: unknown): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (error instanceof GatewayError && error.retryAfterMs !== undefined) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  }
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: toJsonRpcError(error) }), { status: httpStatusFor(error), headers });
}
