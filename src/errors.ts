/**
 * The one error taxonomy of Portcullis.
 *
 * Every error the gateway raises on purpose is a `GatewayError` with a stable machine `code`
 * (never parse messages). `toJsonRpcError` / `httpStatusFor` are the one place that maps an error
 * to what a client sees, and `errorResponse` / `errorMessage` the one place that builds a JSON-RPC
 * error body (docs/errors.md lists every code, status and condition). Messages must never contain secrets: header values, env-sourced values,
 * tokens, commands or URLs (docs/decisions.md, "Errors").
 */
import type { Era } from './rpc/era.js';

/** JSON-RPC 2.0 and MCP wire error codes (kept apart from local error codes). */
export const WireCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /**
   * MCP 2025-11-25: resource not found. MCP 2026-07-28 (SEP-2164) answers it -32602 instead;
   * `toJsonRpcError` picks by the client's era (docs/decisions.md, "Two wire decisions").
   */
  ResourceNotFound: -32002,
  /**
   * Implementation-defined server error (JSON-RPC 2.0 §5.1, -32000 … -32099): the gateway, an
   * upstream or a peer replica cannot serve this now; retry. Never the client's fault.
   */
  Unavailable: -32001,
  /** MCP 2026-07-28: the request needs a capability the client did not declare. */
  MissingRequiredClientCapability: -32021,
  /** MCP 2026-07-28 (SEP-2243): a request's standard headers are missing or disagree with its body. */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: the request names a protocol revision the server does not serve. */
  UnsupportedProtocolVersion: -32022,
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
  | 'UPSTREAM_AUTH_REQUIRED'
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
  | 'WATCH_LIMIT'
  | 'SUBSCRIPTION_LIMIT'
  | 'PARSE_ERROR'
  | 'BODY_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'NOT_ACCEPTABLE'
  | 'NOT_FOUND'
  | 'HOST_INVALID'
  | 'HOST_NOT_ALLOWED'
  | 'ORIGIN_REFUSED'
  | 'UNAUTHENTICATED'
  | 'INSUFFICIENT_SCOPE'
  | 'SESSION_ID_REQUIRED'
  | 'NOT_INITIALIZED'
  | 'ALREADY_INITIALIZED'
  | 'UNSUPPORTED_PROTOCOL_VERSION'
  | 'STREAM_CONFLICT'
  | 'IN_FLIGHT_LIMIT'
  | 'RESUME_REFUSED'
  | 'RESUME_EVICTED'
  | 'RESUME_UNAVAILABLE'
  | 'FORWARD_REFUSED'
  | 'ADMIN_REFUSED'
  | 'REPLICA_UNAVAILABLE'
  | 'CLUSTER_UNAVAILABLE'
  | 'FAILOVER_INTERRUPTED'
  | 'UNKNOWN_CUSTOMIZATION'
  | 'TOGGLE_FORBIDDEN'
  | 'ENABLEMENT_LIMIT'
  | 'ENABLEMENT_STORE_FAILED'
  | 'TOOL_PENDING_APPROVAL'
  | 'INTEGRITY_CONFLICT'
  | 'INTEGRITY_STORE_FAILED';

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

/** An upstream could not serve a request. Never the client's fault: maps to -32001. */
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

/**
 * An HTTP upstream answered with a status that is no MCP answer (a POST refused, a GET stream
 * not opened): `UPSTREAM_UNAVAILABLE`, naming the server and the status only — never the body,
 * which may quote anything. The status is kept for what is decided by it (`httpStatusOf`): a
 * session the upstream forgot (404), the `auto` transport's fallback, a probe's fallback, the
 * advice at start.
 */
export class UpstreamHttpError extends UpstreamError {
  readonly status: number;

  constructor(server: string, status: number, what = 'answered') {
    super('UPSTREAM_UNAVAILABLE', server, `${what} HTTP ${status}`);
    this.name = 'UpstreamHttpError';
    this.status = status;
  }
}

/** The HTTP status an upstream answered with, found along `error`'s cause chain (bounded), if any. */
export function httpStatusOf(error: unknown): number | undefined {
  return findCause(error, (value): value is UpstreamHttpError => value instanceof UpstreamHttpError)?.status;
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

/**
 * One JSON-RPC code and one HTTP status per condition (docs/errors.md lists them). The status is
 * used when the error is answered outside a JSON-RPC stream; inside one the HTTP answer is the
 * stream's own. -32600 for a request the client must change, -32001 for "not now, retry",
 * -32603 only for the gateway's own faults.
 */
export const taxonomy: Readonly<Record<GatewayErrorCode, readonly [rpc: number, status: number]>> = {
  CONFIG_INVALID: [WireCode.InternalError, 500],
  CONFIG_UNREADABLE: [WireCode.InternalError, 500],
  BIND_REFUSED: [WireCode.InternalError, 500],
  LISTEN_FAILED: [WireCode.InternalError, 500],
  UNATTRIBUTABLE: [WireCode.InternalError, 500],
  NOT_IMPLEMENTED: [WireCode.InternalError, 501],

  UPSTREAM_UNAVAILABLE: [WireCode.Unavailable, 502],
  UPSTREAM_START_FAILED: [WireCode.Unavailable, 502],
  UPSTREAM_TIMEOUT: [WireCode.Unavailable, 504],
  UPSTREAM_BLOCKED: [WireCode.Unavailable, 502],
  UPSTREAM_BUSY: [WireCode.Unavailable, 503],
  UPSTREAM_MESSAGE_TOO_LARGE: [WireCode.Unavailable, 502],
  UPSTREAM_AUTH_REQUIRED: [WireCode.Unavailable, 502],
  SESSION_LIMIT: [WireCode.Unavailable, 503],
  SESSION_CHILD_LIMIT: [WireCode.Unavailable, 503],
  PRINCIPAL_CONNECTION_LIMIT: [WireCode.Unavailable, 503],
  WATCH_LIMIT: [WireCode.Unavailable, 503],
  ENABLEMENT_STORE_FAILED: [WireCode.Unavailable, 503],
  INTEGRITY_STORE_FAILED: [WireCode.Unavailable, 503],
  SUBSCRIPTION_LIMIT: [WireCode.Unavailable, 503],
  STARTING: [WireCode.Unavailable, 503],
  SHUTTING_DOWN: [WireCode.Unavailable, 503],
  RESUME_UNAVAILABLE: [WireCode.Unavailable, 503],
  REPLICA_UNAVAILABLE: [WireCode.Unavailable, 502],
  CLUSTER_UNAVAILABLE: [WireCode.Unavailable, 503],
  FAILOVER_INTERRUPTED: [WireCode.Unavailable, 503],

  PARSE_ERROR: [WireCode.ParseError, 400],
  INVALID_REQUEST: [WireCode.InvalidRequest, 400],
  BODY_TOO_LARGE: [WireCode.InvalidRequest, 413],
  UNSUPPORTED_MEDIA_TYPE: [WireCode.InvalidRequest, 415],
  NOT_ACCEPTABLE: [WireCode.InvalidRequest, 406],
  METHOD_NOT_ALLOWED: [WireCode.InvalidRequest, 405],
  NOT_FOUND: [WireCode.InvalidRequest, 404],
  HOST_INVALID: [WireCode.InvalidRequest, 400],
  HOST_NOT_ALLOWED: [WireCode.InvalidRequest, 403],
  ORIGIN_REFUSED: [WireCode.InvalidRequest, 403],
  UNAUTHENTICATED: [WireCode.InvalidRequest, 401],
  INSUFFICIENT_SCOPE: [WireCode.InvalidRequest, 403],
  FORWARD_REFUSED: [WireCode.InvalidRequest, 403],
  ADMIN_REFUSED: [WireCode.InvalidRequest, 403],
  TOGGLE_FORBIDDEN: [WireCode.InvalidRequest, 403],
  ENABLEMENT_LIMIT: [WireCode.InvalidRequest, 409],
  INTEGRITY_CONFLICT: [WireCode.InvalidRequest, 409],
  SESSION_NOT_FOUND: [WireCode.InvalidRequest, 404],
  SESSION_ID_REQUIRED: [WireCode.InvalidRequest, 400],
  NOT_INITIALIZED: [WireCode.InvalidRequest, 400],
  ALREADY_INITIALIZED: [WireCode.InvalidRequest, 400],
  UNSUPPORTED_PROTOCOL_VERSION: [WireCode.InvalidRequest, 400],
  STREAM_CONFLICT: [WireCode.InvalidRequest, 409],
  DUPLICATE_REQUEST_ID: [WireCode.InvalidRequest, 400],
  RESUME_REFUSED: [WireCode.InvalidRequest, 400],
  RESUME_EVICTED: [WireCode.InvalidRequest, 410],
  PRINCIPAL_SESSION_LIMIT: [WireCode.InvalidRequest, 429],
  RATE_LIMITED: [WireCode.InvalidRequest, 429],
  IN_FLIGHT_LIMIT: [WireCode.InvalidRequest, 429],
  TASK_LIMIT: [WireCode.InvalidRequest, 429],

  INVALID_PARAMS: [WireCode.InvalidParams, 400],
  UNKNOWN_TOOL: [WireCode.InvalidParams, 400],
  // The tool exists but its definition is not the one pinned (tool integrity, hold mode).
  TOOL_PENDING_APPROVAL: [WireCode.InvalidParams, 403],
  UNKNOWN_PROMPT: [WireCode.InvalidParams, 400],
  UNKNOWN_SERVER: [WireCode.InvalidParams, 400],
  UNKNOWN_TASK: [WireCode.InvalidParams, 400],
  UNKNOWN_CUSTOMIZATION: [WireCode.InvalidParams, 404],
  CLIENT_FEATURE_MISSING: [WireCode.InvalidParams, 400],
  UNKNOWN_RESOURCE: [WireCode.ResourceNotFound, 400],
  // A server→client request the client did not declare: what the client would answer itself.
  CLIENT_CAPABILITY_MISSING: [WireCode.MethodNotFound, 400],
  NOT_SUPPORTED: [WireCode.MethodNotFound, 400],
  MISSING_CLIENT_CAPABILITY: [WireCode.MissingRequiredClientCapability, 400],
};

/**
 * The JSON-RPC code of `code` for a client of `era`: resource not found is -32002 up to MCP
 * 2025-11-25 and -32602 from 2026-07-28 (SEP-2164), with `data.uri` in both.
 */
function wireCodeOf(code: GatewayErrorCode, era: Era | undefined): number {
  if (code === 'UNKNOWN_RESOURCE' && era === '2026') return WireCode.InvalidParams;
  return taxonomy[code][0];
}

/**
 * The one mapping from any thrown value to the JSON-RPC error a client sees. Unknown errors
 * become a generic internal error: their messages may carry details we did not vet. `era` is
 * the asking client's, when known (a 2025-era client when not).
 */
export function toJsonRpcError(error: unknown, era?: Era): JsonRpcErrorBody {
  if (error instanceof UpstreamRpcError) {
    return error.data === undefined
      ? { code: error.rpcCode, message: error.message }
      : { code: error.rpcCode, message: error.message, data: error.data };
  }
  if (error instanceof GatewayError) {
    return { code: wireCodeOf(error.code, era), message: error.message, data: { ...error.data, code: error.code } };
  }
  return { code: WireCode.InternalError, message: 'internal gateway error' };
}

/** HTTP status for an error answered outside a JSON-RPC stream (edge refusals, session lookups). */
export function httpStatusFor(error: unknown): number {
  return error instanceof GatewayError ? taxonomy[error.code][1] : 500;
}

/** A JSON-RPC request id; `null` when the request's id is unknown (JSON-RPC 2.0 §5). */
export type ResponseId = string | number | null;

/** The JSON-RPC error response message answering request `id` with `error`. */
export function errorMessage(id: ResponseId, error: unknown): { jsonrpc: '2.0'; id: ResponseId; error: JsonRpcErrorBody } {
  return { jsonrpc: '2.0', id, error: toJsonRpcError(error) };
}

/**
 * The JSON-RPC error response answering request `id` with an error already in its wire form: a
 * `ProtocolError` the method table threw (inbound/method-table.ts, mapped by `toJsonRpcError`),
 * or a `ProtocolRefusal` of the 2026 validation ladder.
 */
export function answerError(id: ResponseId, error: { code: number; message: string; data?: unknown }): { jsonrpc: '2.0'; id: ResponseId; error: JsonRpcErrorBody } {
  return { jsonrpc: '2.0', id, error: error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data } };
}

export interface ErrorResponseOptions {
  /** The id of the request refused, when known and safe to answer under; default `null`. */
  id?: string | number;
  /** Extra headers (`Allow` of a 405, `WWW-Authenticate` of a 401). */
  headers?: Record<string, string>;
  /**
   * The refusal answers a JSON-RPC request in band (HTTP 200, like any error a request's handler
   * returns): a request the entrance refused (inbound/entrance.ts), which the client reads as the
   * answer to its call rather than as a transport failure.
   */
  inBand?: boolean;
}

/**
 * The HTTP answer to a request refused outside any JSON-RPC stream: the status `httpStatusFor`
 * gives, the JSON-RPC error `toJsonRpcError` gives (with `"id": null` unless the id is known),
 * and `Retry-After` in whole seconds when the error says when to retry (RFC 9110 §10.2.3).
 */
export function errorResponse(error: unknown, options: ErrorResponseOptions = {}): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (error instanceof GatewayError && error.retryAfterMs !== undefined) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  }
  const status = options.inBand === true ? 200 : httpStatusFor(error);
  const response = new Response(JSON.stringify(errorMessage(options.id ?? null, error)), { status, headers });
  if (error instanceof GatewayError) answered.set(response, { code: error.code, rpcCode: taxonomy[error.code][0], id: options.id ?? null });
  return response;
}

/** What each refusal answered by `errorResponse` refused, for the audit log of refusals. */
const answered = new WeakMap<Response, AnsweredRefusal>();

export interface AnsweredRefusal {
  code: GatewayErrorCode;
  /** The JSON-RPC error code the body carries. */
  rpcCode: number;
  id: ResponseId;
}

/** The gateway code (and request id) of a response `errorResponse` built; `undefined` for any other response. */
export function refusalOf(response: Response): AnsweredRefusal | undefined {
  return answered.get(response);
}

/** Shorthand: the HTTP refusal of `code` with `message` (a `GatewayError` answered by `errorResponse`). */
export function refusal(code: GatewayErrorCode, message: string, options: GatewayErrorOptions & ErrorResponseOptions = {}): Response {
  const { id, headers, ...rest } = options;
  return errorResponse(new GatewayError(code, message, rest), { ...(id === undefined ? {} : { id }), ...(headers === undefined ? {} : { headers }) });
}

/**
 * The first error along `error`'s cause chain (itself first, at most 8 deep, so a cyclic or
 * hostile chain ends) that `match` accepts: what decides an answer (an authorization challenge,
 * an egress refusal, an upstream's 404) may sit a few wrappings deep.
 */
export function findCause<T>(error: unknown, match: (value: unknown) => value is T): T | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (match(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * A refusal of the MCP 2026-07-28 Streamable HTTP validation ladder (basic/transports/
 * streamable-http): the message's shape, its era, its `_meta` envelope, the standard headers
 * (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), the method's existence in the revision,
 * a listen's filter. These are protocol conditions, not the gateway's: each is answered with the
 * HTTP status the spec gives its rung and the wording of the SDK's own HTTP entry, so a 2026
 * client meets the gateway exactly as it meets a direct server (no gateway `data.code`). The
 * SDK's classifier (`classifyInboundRequest`) returns its refusals in this shape.
 */
export interface ProtocolRefusal {
  readonly httpStatus: number;
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** The ladder refusals the gateway decides itself (the classifier's come ready-made). */
export const protocolRefusal = {
  /** A standard header missing or disagreeing with the body (SEP-2243): 400, -32020. */
  headerMismatch(header: string, body: string): ProtocolRefusal {
    return {
      httpStatus: 400,
      code: WireCode.HeaderMismatch,
      message: `Bad Request: the request headers and body disagree: ${body}`,
      data: { mismatch: { header, body } },
    };
  },
  /** A revision the endpoint does not serve: 400, -32022 naming those it does. */
  unsupportedVersion(supported: readonly string[], requested: string): ProtocolRefusal {
    return {
      httpStatus: 400,
      code: WireCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version: ${requested}`,
      data: { supported: [...supported], requested },
    };
  },
  /** A method of the protocol that this revision does not have (`ping`, `initialize`, … on 2026-07-28): 404, -32601. */
  methodNotFound(): ProtocolRefusal {
    return { httpStatus: 404, code: WireCode.MethodNotFound, message: 'Method not found' };
  },
  /** A JSON-RPC response POSTed by a 2026 client, which has no server-to-client requests to answer: 400, -32600. */
  postedResponse(): ProtocolRefusal {
    return { httpStatus: 400, code: WireCode.InvalidRequest, message: 'Bad Request: JSON-RPC responses cannot be posted to this endpoint' };
  },
  /** A `subscriptions/listen` whose `notifications` filter is missing or malformed: in band, -32602. */
  invalidListenFilter(): ProtocolRefusal {
    return { httpStatus: 200, code: WireCode.InvalidParams, message: "Invalid params: 'notifications' is required and must be a valid SubscriptionFilter" };
  },
  /** A 2026 result the gateway could not encode (a `resultType` its method does not have): in band, -32603. */
  unencodable(): ProtocolRefusal {
    return { httpStatus: 200, code: WireCode.InternalError, message: 'Internal error' };
  },
};

/** The HTTP answer of `refusal` (its status, the JSON-RPC error in a JSON body). */
export function protocolRefusalResponse(refusal: ProtocolRefusal, id: ResponseId): Response {
  return Response.json(answerError(id, refusal), { status: refusal.httpStatus });
}

/**
 * The JSON-RPC error answering a 2026-07-28 request `id`, and the HTTP status of a JSON answer
 * carrying it. `error` is what the method table threw — a `ProtocolError` whose code, message and
 * data are already the taxonomy's (carried as they are) — or anything else, mapped here. A 2026
 * client never gets -32002 (SEP-2164: resource not found is -32602 on this revision, an
 * upstream's own -32002 included). The status is 200 (an error of the request, not of the
 * transport), except -32021, which MCP 2026-07-28 answers 400 wherever it arises.
 */
export function answer2026Error(id: string | number, error: unknown): { message: { jsonrpc: '2.0'; id: ResponseId; error: JsonRpcErrorBody }; status: number } {
  const thrown = error as { code?: unknown; message?: unknown; data?: unknown } | null;
  const body: JsonRpcErrorBody =
    !(error instanceof GatewayError) && typeof thrown?.code === 'number' && Number.isSafeInteger(thrown.code)
      ? { code: thrown.code, message: typeof thrown.message === 'string' ? thrown.message : 'Internal error', ...(thrown.data === undefined ? {} : { data: thrown.data }) }
      : toJsonRpcError(error, '2026');
  if (body.code === WireCode.ResourceNotFound) body.code = WireCode.InvalidParams;
  return { message: answerError(id, body), status: body.code === WireCode.MissingRequiredClientCapability ? 400 : 200 };
}
