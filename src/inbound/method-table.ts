/**
 * The gateway's own method table: what the gateway answers to one parsed JSON-RPC request of a
 * client, in either era, with no transport in sight. A binding (a 2025 session's peer, a 2026
 * HTTP exchange) parses the message, decides nothing about methods, and calls
 * {@link MethodTable.handle} with the request as the client sent it and the call's context; it
 * writes the result, or the error `handle` throws, back on its own wire.
 *
 * What the table does, per request:
 * - the era gate: a method only the other revision defines does not exist (-32601);
 * - the handshake answers itself: `initialize` (2025 era, its params checked; the protocol
 *   version negotiated against the SDK's `SUPPORTED_PROTOCOL_VERSIONS`) and `server/discover`
 *   (2026 era), each completed for the asking client (`Handshake`: its persona, the endpoint's
 *   `_meta`); `ping` (2025 era);
 * - everything else is routed (routing/gateway-entries.ts `routeWithEntries`, then the router)
 *   with the client's `_meta` read once (rpc/request-meta.ts), the init options that apply, the
 *   2026 `Mcp-Param-*` headers, and a sink for what upstreams send back toward the client;
 * - around a routed request: its `rpc` log line, its metrics, its trace span and audit line
 *   (request-observers.ts), the poll timer that closes a long call's SSE stream (SEP-1699);
 * - on the way out: a 2026 upstream's own identity stamp is dropped from the result (the client
 *   talks to the gateway), a 2025 client's tool list gets object-rooted output schemas, and every
 *   failure becomes a `ProtocolError` whose code, message and data are the one error taxonomy's
 *   for the era (src/errors.ts, docs/errors.md).
 *
 * What it leaves to the binding (a 2025 session's: client-peer.ts; a 2026 request's:
 * request-2026.ts): ids, correlation, cancellation (abort `signal`), notifications
 * (`initialized`, `cancelled`, `roots/list_changed`), what the client declared at `initialize`
 * (the binding reads it from the request and gives it to the call's `sink`), which stream a
 * message goes on, and the 2026 wire encoding of results (`resultType`, the gateway's own
 * serverInfo stamp, cache fields).
 */
import { ProtocolError, SERVER_INFO_META_KEY, type ServerCapabilities } from '@modelcontextprotocol/server';
import { GatewayError, toJsonRpcError } from '../errors.js';
import { fixedFieldLogger, type Logger } from '../observability/logger.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { sessionTag } from '../observability/session-tag.js';
import type { AccessProfile } from '../policy/access-policy.js';
import { routeWithEntries, type GatewayEntries } from '../routing/gateway-entries.js';
import { requestLabels } from '../routing/request-labels.js';
import { TASKS_EXTENSION } from '../routing/tasks/task-capabilities.js';
import type { CallContext, RouteScope } from '../routing/router.js';
import type { InitOptions } from '../rpc/init-options.js';
import { requestMeta } from '../rpc/request-meta.js';
import { PROTOCOL_2026, VERSIONS_2025, type Era } from '../rpc/era.js';
import type { DownstreamSink } from '../rpc/sink.js';
import type { OptionsReader } from './init-options-reader.js';
import { paramHeadersOf } from './param-headers.js';
import { observeRequest, type RequestObservers } from './request-observers.js';

export type { Era };

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

/** What the gateway adds to one handshake result. */
export interface HandshakeAnswer {
  /** Replaces the endpoint's instructions; absent: they stand. */
  readonly instructions?: string;
  /** Merged into the result's `_meta`. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/**
 * Decides the handshake answer from the client's `_meta` (request `_meta`, the 2026 envelope).
 * Throws to refuse the handshake (a bad init option): a `GatewayError` or a `ProtocolError`.
 */
export type Handshake = (clientMeta: Record<string, unknown> | undefined) => HandshakeAnswer;

/** One endpoint's table for one era (a 2025 session's, or one 2026 request's). */
export interface MethodTableOptions {
  era: Era;
  /** The gateway's `serverInfo`. */
  name: string;
  version: string;
  /** Declared in `initialize` / `server/discover`. */
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  logger: Logger;
  /** Close a long call's SSE stream after this long (needs `MethodCall.closeSse`); absent: never. */
  pollAfterMs?: number | undefined;
  /** Where each routed request's duration and outcome is counted; absent: not counted. */
  metrics?: GatewayMetrics | undefined;
  /** Traces and audit lines of each routed request (request-observers.ts); absent: neither. */
  observers?: RequestObservers | undefined;
  /** Completes the handshake result for the asking client; absent: the endpoint's answer as is. */
  handshake?: Handshake | undefined;
  /** The gateway's own prompts, resources and data tools (routing/gateway-entries.ts); absent: none. */
  entries?: GatewayEntries | undefined;
  /**
   * The client's init options: a 2025 session's (read at its `initialize`), or, for 2026
   * requests, read from each request's `_meta` by this reader (bad values refused -32602).
   */
  options?: { session(): InitOptions } | { perRequest: OptionsReader } | undefined;
}

/** One JSON-RPC request as the client sent it: `params` untouched (`_meta`, `inputResponses`, `requestState` in place). */
export interface InboundRequest {
  readonly id: string | number;
  readonly method: string;
  readonly params?: Params | undefined;
}

/** What one request is answered with, besides the request itself. */
export interface MethodCall {
  /** Where the request routes (a session's scope as the request's token sees it; a 2026 request's own). */
  scope: RouteScope;
  /** Aborted when the client cancels the request or goes away. */
  signal: AbortSignal;
  /**
   * Where messages an upstream sends for this call go: the call's own stream. Its
   * `clientCapabilities` are what this request's client declared (a 2025 session's
   * `initialize`, a 2026 request's `_meta` envelope); absent counts as nothing declared.
   */
  sink: DownstreamSink;
  /** The HTTP request's headers: a 2026 request's `Mcp-Param-*` go upstream; trace context for observers. */
  headers?: Headers | undefined;
  /** The authenticated principal (audit lines); absent when auth is off. */
  principal?: string | undefined;
  /** What the policy's access rules let this caller see (audit lines name the rule that hid a name). */
  access?: AccessProfile | undefined;
  /** A 2025 session's id (log lines carry its tag, never the id). */
  sessionId?: string | undefined;
  /** Closes this call's SSE stream, the call going on (polling; resumable streams only). */
  closeSse?: (() => void) | undefined;
}

export interface MethodTable {
  readonly era: Era;
  /**
   * Answers `request`: resolves with its result, or rejects with a `ProtocolError` carrying the
   * era's JSON-RPC error (code, message, data). Never answers a notification (the binding owns
   * those: cancellation, `initialized`, `roots/list_changed`).
   */
  handle(request: InboundRequest, call: MethodCall): Promise<Result>;
}

/** The 2026 revisions served: `server/discover` names them (MCP 2026-07-28, lifecycle). */
export const SUPPORTED_2026_VERSIONS: readonly string[] = [PROTOCOL_2026];

/** The version an `initialize` settles on: the client's when served, else the newest served (MCP 2025-11-25, lifecycle). */
export function negotiatedVersion(requested: unknown): string {
  return typeof requested === 'string' && VERSIONS_2025.includes(requested) ? requested : VERSIONS_2025[0]!;
}


/** Requests of the 2025 revisions (MCP 2025-11-25 schema), client's and server's. */
const METHODS_2025 = new Set([
  'ping', 'initialize', 'completion/complete', 'logging/setLevel', 'prompts/get', 'prompts/list', 'resources/list',
  'resources/templates/list', 'resources/read', 'resources/subscribe', 'resources/unsubscribe', 'tools/call', 'tools/list',
  'tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel', 'sampling/createMessage', 'elicitation/create', 'roots/list',
]);

/** Requests of the 2026-07-28 revision (its schema), beside the tasks extension's. */
const METHODS_2026 = new Set([
  'tools/call', 'tools/list', 'prompts/get', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read',
  'completion/complete', 'server/discover', 'subscriptions/listen',
]);

/** The tasks extension's names that 2026-07-28 removed from its core (served when the extension is declared). */
const TASK_EXTENSION_METHODS = new Set(['tasks/get', 'tasks/cancel']);

/**
 * A method some revision defines but not the client's: it does not exist for this client (-32601),
 * as the SDK's era gate answered. Names outside both schemas (extensions) are the router's to judge.
 * Exported for the 2026 HTTP binding (request-2026.ts), which answers it before dispatch with the
 * status the revision gives that rung (404).
 */
export function inOtherEraOnly(method: string, era: Era, tasksExtension: boolean): boolean {
  if (era === '2025') return !METHODS_2025.has(method) && METHODS_2026.has(method);
  if (METHODS_2026.has(method) || (tasksExtension && TASK_EXTENSION_METHODS.has(method))) return false;
  return METHODS_2025.has(method);
}

/** Logging levels of `logging/setLevel` (MCP 2025-11-25, server/utilities/logging). */
const LOGGING_LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

/**
 * A 2026 upstream stamps its own identity into each result's `_meta`; the client talks to the
 * gateway, so the upstream's stamp is dropped (the gateway's own goes on at encoding).
 */
function withoutUpstreamIdentity(result: Result): Result {
  const meta = result._meta as Record<string, unknown> | undefined;
  if (meta === undefined || !(SERVER_INFO_META_KEY in meta)) return result;
  const { [SERVER_INFO_META_KEY]: _upstream, ...rest } = meta;
  if (Object.keys(rest).length > 0) return { ...result, _meta: rest };
  const { _meta: _dropped, ...bare } = result;
  return bare;
}

const NO_OPTIONS: InitOptions = Object.freeze({});

/** Characters of a client-sent string an `rpc` line carries (as the audit line cuts them). */
const LOGGED_CHARS = 512;

function logged(value: string): string {
  return value.length > LOGGED_CHARS ? value.slice(0, LOGGED_CHARS) : value;
}

function metaOf(params: Params | undefined): Record<string, unknown> | undefined {
  const meta = params?._meta;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : undefined;
}

/** A method of the other era only: no such method in this one (2026-07-28 removed `initialize`, `ping`, …; 2025 has no `server/discover`). */
function otherEra(method: string): GatewayError {
  return new GatewayError('NOT_SUPPORTED', `Method not found: ${method}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What an `initialize` must carry (MCP 2025-11-25 lifecycle: `InitializeRequest`); the refusal's text, or undefined. */
function initializeProblem(params: Params | undefined): string | undefined {
  if (typeof params?.protocolVersion !== 'string') return 'protocolVersion must be a string';
  if (!isObject(params.capabilities)) return 'capabilities must be an object';
  const info = params.clientInfo;
  if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return 'clientInfo must name the client (name, version)';
  return undefined;
}

/** JSON Schema keys whose values are data, not subschemas: a `$ref` inside is a literal. */
const DATA_KEYS = new Set(['const', 'enum', 'default', 'examples']);

/** `schema` with its document-local `$ref`s pointing one level down, under `properties.result`. */
function refsUnderResult(node: unknown, dataPosition: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => refsUnderResult(item, false));
  if (!isObject(node) || dataPosition) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#')) out[key] = `#/properties/result${value.slice(1)}`;
    else out[key] = refsUnderResult(value, DATA_KEYS.has(key));
  }
  return out;
}

/**
 * A 2025 client's tool list: the 2025 schema wants an `outputSchema` whose root is an object, and
 * a 2026 upstream may declare any root; such a schema goes out wrapped as `{ result: <schema> }`,
 * as the SDK's 2025 encoding did (document-local `$ref`s rewritten; a root `$id` starts a new
 * base, so nothing under it is).
 */
export function as2025ToolList(result: Result): Result {
  const tools = result.tools;
  const wraps = (tool: unknown) => isObject(tool) && isObject(tool.outputSchema) && tool.outputSchema.type !== 'object';
  if (!Array.isArray(tools) || !tools.some(wraps)) return result;
  return {
    ...result,
    tools: tools.map((tool: Record<string, unknown>) => {
      if (!wraps(tool)) return tool;
      const schema = tool.outputSchema as Record<string, unknown>;
      const { $schema, ...natural } = schema;
      const inner = typeof schema.$id === 'string' ? natural : (refsUnderResult(natural, false) as Record<string, unknown>);
      const wrapped = { ...(typeof $schema === 'string' ? { $schema } : {}), type: 'object', properties: { result: inner }, required: ['result'] };
      return { ...tool, outputSchema: wrapped };
    }),
  };
}

/** A failure as the era's JSON-RPC error, thrown as the `ProtocolError` bindings write back. */
function protocolError(error: unknown, era: Era): ProtocolError {
  if (error instanceof ProtocolError) return error;
  const wire = toJsonRpcError(error, era);
  return new ProtocolError(wire.code, wire.message, wire.data);
}

export function createMethodTable(options: MethodTableOptions): MethodTable {
  const { era } = options;
  const rpcLog = fixedFieldLogger(options.logger);
  const serverInfo = { name: options.name, version: options.version };
  const checksLevel = era === '2025' && options.capabilities.logging !== undefined;
  const tasksExtension = options.capabilities.extensions?.[TASKS_EXTENSION] !== undefined;

  /** The handshake's instructions and `_meta`, completed for the asking client. */
  const complete = (result: Result, params: Params | undefined): Result => {
    if (options.instructions) result.instructions = options.instructions;
    if (options.handshake === undefined) return result;
    const meta = metaOf(params);
    const answer = options.handshake(meta === undefined || Object.keys(meta).length === 0 ? undefined : meta);
    if (answer.instructions !== undefined) result.instructions = answer.instructions;
    if (answer.meta !== undefined) result._meta = { ...answer.meta };
    return result;
  };

  const initOptionsOf = (meta: Record<string, unknown> | undefined): InitOptions => {
    const source = options.options;
    if (source === undefined) return NO_OPTIONS;
    if ('session' in source) return source.session();
    const read = source.perRequest(meta);
    if (!read.ok) throw new GatewayError('INVALID_PARAMS', read.message);
    return read.options;
  };

  const route = async (request: InboundRequest, call: MethodCall): Promise<Result> => {
    const started = performance.now();
    const params = request.params ?? {};
    const { scope } = call;
    const context: CallContext = { sink: call.sink, signal: call.signal, meta: requestMeta(metaOf(request.params) ?? {}), era };
    if (era === '2026') {
      const paramHeaders = paramHeadersOf(call.headers);
      if (paramHeaders !== undefined) context.headers = paramHeaders;
    }
    // Polling (SEP-1699): the stream is closed, the call goes on, the client resumes from its
    // Last-Event-ID. Offered by the binding only when the stream is resumable.
    const closeSse = call.closeSse;
    const poll = options.pollAfterMs !== undefined && closeSse !== undefined ? setTimeout(() => closeSse(), options.pollAfterMs) : undefined;
    // The method and name are the client's own bytes: a line carries at most LOGGED_CHARS of each, and only a string name.
    const line: Record<string, unknown> = { rpc: logged(request.method), session: sessionTag(call.sessionId), era };
    if ((request.method === 'tools/call' || request.method === 'prompts/get') && typeof params.name === 'string') line.name = logged(params.name);
    const metrics = options.metrics;
    // Labels come from the catalogue, never from the request as sent (metrics.ts).
    const labels = metrics === undefined ? undefined : requestLabels(scope, request.method, params);
    // Counted before the answer leaves, so a scrape after a response always includes it.
    const count = async (outcome: 'ok' | 'error') => {
      if (metrics === undefined || labels === undefined) return;
      metrics.observeRequest({ ...(await labels), outcome, seconds: (performance.now() - started) / 1000 });
    };
    // Traces and audit: nothing is built for them when both are off (request-observers.ts).
    const observed = observeRequest(options.observers, {
      method: request.method,
      params,
      sessionId: call.sessionId,
      requestId: request.id,
      principal: call.principal,
      headers: call.headers,
      meta: context.meta,
      access: scope.access ?? call.access,
    });
    try {
      const initOptions = initOptionsOf(context.meta);
      const work = () => routeWithEntries(options.entries, scope, request.method, params, context, initOptions);
      const answered = withoutUpstreamIdentity(await (observed === undefined ? work() : observed.run(work)));
      const result = era === '2025' && request.method === 'tools/list' ? as2025ToolList(answered) : answered;
      rpcLog.info({ ...line, outcome: 'ok', ms: Math.round(performance.now() - started) }, 'rpc');
      observed?.finish();
      await count('ok');
      return result;
    } catch (error) {
      const refused = protocolError(error, era);
      rpcLog.info({ ...line, outcome: 'error', code: refused.code, ms: Math.round(performance.now() - started) }, 'rpc');
      observed?.finish(error);
      await count('error');
      throw refused;
    } finally {
      if (poll !== undefined) clearTimeout(poll);
    }
  };

  const handle = async (request: InboundRequest, call: MethodCall): Promise<Result> => {
    if (inOtherEraOnly(request.method, era, tasksExtension)) throw protocolError(otherEra(request.method), era);
    switch (request.method) {
      case 'ping':
        return {};
      case 'initialize':
        try {
          const problem = initializeProblem(request.params);
          if (problem !== undefined) throw new GatewayError('INVALID_PARAMS', `initialize: ${problem}`);
          const result: Result = {
            protocolVersion: negotiatedVersion(request.params?.protocolVersion),
            capabilities: options.capabilities,
            serverInfo,
          };
          return complete(result, request.params);
        } catch (error) {
          throw protocolError(error, era);
        }
      case 'server/discover':
        try {
          return complete({ supportedVersions: SUPPORTED_2026_VERSIONS, capabilities: options.capabilities }, request.params);
        } catch (error) {
          throw protocolError(error, era);
        }
      case 'logging/setLevel':
        // The level belongs to the upstreams that log, so it is routed, once known to be a level.
        if (checksLevel && !LOGGING_LEVELS.has(request.params?.level as string)) {
          throw protocolError(new GatewayError('INVALID_PARAMS', `logging/setLevel: unknown level ${JSON.stringify(request.params?.level)}`), era);
        }
        break;
      case 'tasks/get':
      case 'tasks/cancel':
        // The tasks extension's params (the router checks the id names a task of the caller).
        if (era === '2026' && typeof request.params?.taskId !== 'string') {
          throw protocolError(new GatewayError('INVALID_PARAMS', `${request.method}: taskId must be a string`), era);
        }
        break;
    }
    return route(request, call);
  };

  return { era, handle };
}
