/**
 * One 2026-07-28 request over Streamable HTTP, from the parsed body to the HTTP answer: the
 * gateway's own binding of the stateless revision (MCP 2026-07-28 basic/transports/
 * streamable-http). No protocol engine sits here: the body the endpoint read once is validated,
 * the method table (method-table.ts) answers it, and the answer is written back.
 *
 * 1. The validation ladder, in the order and with the statuses of the SDK's own HTTP entry
 *    (`createMcpHandler`), so a client meets the gateway as it meets a direct SDK server:
 *    - the SDK's pure classifier (`classifyInboundRequest`, also the endpoint's era router):
 *      the message's shape (-32600), the `_meta` envelope (400, -32602 naming the key), the
 *      `MCP-Protocol-Version` / `Mcp-Method` headers against the body (400, -32020);
 *    - the revision must be one served (400, -32022 listing those that are);
 *    - the standard headers a request must carry (SEP-2243): `MCP-Protocol-Version` and
 *      `Mcp-Method` on every request, `Mcp-Name` mirroring `params.name` / `params.uri` /
 *      `params.taskId` where the method has one, `=?base64?…?=` decoded (400, -32020);
 *    - a method of the protocol this revision does not have (`ping`, `initialize`,
 *      `logging/setLevel`, `resources/subscribe`, …) is not found (404, -32601); the tasks
 *      extension's `tasks/get` / `tasks/cancel` exist where the endpoint offers the extension.
 *    A notification that passes is accepted (202) and goes nowhere: the client notifications
 *    2026-07-28 defines concern a connection, and a 2026 request has none.
 * 2. `subscriptions/listen` is a stream of its own (listens-2026.ts).
 * 3. Any other request goes to the method table with the caller (principal, access profile),
 *    the scope of its principal and workspace, and the capabilities its envelope declares.
 *    The answer is one JSON body when the result is all there is, and an SSE stream when the
 *    call sends something first (progress, log messages): the stream opens with the first such
 *    message and ends with the result. A client that hangs up (the request's signal, or the
 *    stream cancelled) aborts the call, which cancels it upstream.
 * 4. Results are encoded for the revision (MCP 2026-07-28 basic, "Result"): `resultType`
 *    (`complete` unless a multi-round-trip method says `input_required`), `ttlMs` and
 *    `cacheScope` on cacheable results when the router gave none (0, `private`), the gateway's
 *    identity in `_meta["io.modelcontextprotocol/serverInfo"]`, and fields the revision deleted
 *    (a tool's `execution`, the `tasks` capability) dropped. Errors: errors.ts `answer2026Error`.
 */
import {
  classifyInboundRequest,
  SERVER_INFO_META_KEY,
  type Implementation,
  type InboundClassificationOutcome,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type ServerCapabilities,
} from '@modelcontextprotocol/server';
import { answer2026Error, answerError, errorResponse, protocolRefusal, protocolRefusalResponse, type ProtocolRefusal, type ResponseId } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { AccessProfile } from '../policy/access-policy.js';
import type { RouteScope } from '../routing/router.js';
import { TASKS_EXTENSION } from '../routing/tasks/task-capabilities.js';
import { workspaceError, workspaceOf } from '../routing/workspace.js';
import { envelopeCapabilities } from '../rpc/client-capabilities.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { inOtherEraOnly, SUPPORTED_2026_VERSIONS, type MethodTable } from './method-table.js';
import type { ListenStreams } from './listens-2026.js';
import type { IncomingBody } from './incoming-body.js';
import { MAX_UNREAD_BYTES, SSE_HEADERS, SseWriter } from './sse-writer.js';
import { mcpNameField } from '../rpc/standard-headers.js';

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

// The validation ladder (pure)

/** The era decision of the endpoint: the SDK's classifier on the body read once and the three standard headers. */
export function classifyRequest(request: Request, body: unknown): InboundClassificationOutcome {
  const headers = request.headers;
  return classifyInboundRequest({
    httpMethod: request.method,
    ...optional('protocolVersionHeader', headers.get('mcp-protocol-version')),
    ...optional('mcpMethodHeader', headers.get('mcp-method')),
    ...optional('mcpNameHeader', headers.get('mcp-name')),
    body,
  });
}

function optional<K extends string>(key: K, value: string | null): { [P in K]?: string } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: string };
}

/**
 * A JSON-RPC response POSTed outside any session by a client naming a 2026 revision in its
 * `MCP-Protocol-Version` header: the classifier calls every response 2025 traffic, but 2026-07-28
 * has no server-to-client requests, so there is nothing to answer. Refused as the SDK's
 * 2026-only entry refuses it (400, -32600), rather than telling the client to send an
 * `Mcp-Session-Id` its revision does not have. Pure.
 */
export function postedResponseRefusal(outcome: InboundClassificationOutcome, headers: Headers): ProtocolRefusal | undefined {
  if (outcome.kind !== 'legacy' || outcome.reason !== 'response' || headers.get('mcp-session-id') !== null) return undefined;
  const version = headers.get('mcp-protocol-version');
  return version !== null && SUPPORTED_2026_VERSIONS.includes(version) ? protocolRefusal.postedResponse() : undefined;
}

/** A 2026-era outcome of the classifier: served here (legacy outcomes go to the endpoint's sessions). */
export type Outcome2026 = Exclude<InboundClassificationOutcome, { kind: 'legacy' }>;

/** What the ladder let through: a request to answer, a notification to accept, or the refusal. */
export type Admission =
  | { kind: 'request'; message: JSONRPCRequest }
  | { kind: 'notification'; message: JSONRPCNotification }
  | { kind: 'refused'; refusal: ProtocolRefusal; id: ResponseId };

/** The id an error may answer: the request's, when it is a request with a usable id (JSON-RPC 2.0 §5). */
function echoableId(body: unknown): ResponseId {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { method, id } = body as { method?: unknown; id?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? id : null;
}

/** RFC 9110 optional whitespace (SP, HTAB) around a field value, removed. */
function stripOws(value: string): string {
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8_STRICT = new TextDecoder('utf-8', { fatal: true });

/** A header value as sent, or its `=?base64?…?=` payload decoded (SEP-2243); undefined when that payload is not canonical Base64 of UTF-8. */
export function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith('=?base64?') && value.endsWith('?='))) return value;
  const payload = value.slice(9, value.length - 2);
  if (!BASE64.test(payload)) return undefined;
  try {
    return UTF8_STRICT.decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * The standard headers a 2026 request must carry (SEP-2243): `MCP-Protocol-Version`, then
 * `Mcp-Method`, then `Mcp-Name` where the method mirrors a body field. Notifications are exempt.
 */
function standardHeaderRefusal(message: JSONRPCRequest, revision: string | undefined, headers: Headers): ProtocolRefusal | undefined {
  if (headers.get('mcp-protocol-version') === null) {
    return protocolRefusal.headerMismatch(
      '(missing)',
      revision === undefined
        ? 'the body carries a modern per-request envelope but the required MCP-Protocol-Version header is absent'
        : `the body envelope names protocol version ${revision} but the required MCP-Protocol-Version header is absent`,
    );
  }
  const method = message.method;
  if (headers.get('mcp-method') === null) return protocolRefusal.headerMismatch('(missing)', `the body names method ${method} but the required Mcp-Method header is absent`);
  const field = mcpNameField(method);
  if (field === undefined) return undefined;
  const raw = (message.params as Params | undefined)?.[field];
  const bodyValue = typeof raw === 'string' ? raw : undefined;
  const header = headers.get('mcp-name');
  if (header === null) {
    return bodyValue === undefined
      ? undefined
      : protocolRefusal.headerMismatch('(missing)', `the body carries params.${field}="${bodyValue}" but the required Mcp-Name header is absent`);
  }
  const named = stripOws(header);
  const decoded = decodeHeaderValue(named);
  if (decoded === undefined) return protocolRefusal.headerMismatch(named, 'the Mcp-Name header carries an invalid Base64 sentinel value');
  if (bodyValue !== undefined && decoded !== bodyValue) {
    return protocolRefusal.headerMismatch(named, `the body carries params.${field}="${bodyValue}" but the Mcp-Name header names "${decoded}"`);
  }
  return undefined;
}

/**
 * The ladder after the classifier, pure: `outcome` is the classifier's verdict (not legacy) on
 * `body`, `headers` the request's, `tasksExtension` whether the endpoint offers the tasks
 * extension to this caller. A refusal answers the request's id when it has a usable one.
 */
export function admit(outcome: Outcome2026, body: unknown, headers: Headers, tasksExtension: boolean): Admission {
  const id = echoableId(body);
  if (outcome.kind === 'reject') return { kind: 'refused', refusal: outcome, id };
  const revision = outcome.classification.revision;
  if (revision === undefined || !SUPPORTED_2026_VERSIONS.includes(revision)) {
    return { kind: 'refused', refusal: protocolRefusal.unsupportedVersion(SUPPORTED_2026_VERSIONS, revision ?? 'unknown'), id };
  }
  if (outcome.messageKind === 'notification') return { kind: 'notification', message: outcome.message };
  const message = outcome.message;
  const headerRefusal = standardHeaderRefusal(message, revision, headers);
  if (headerRefusal !== undefined) return { kind: 'refused', refusal: headerRefusal, id };
  // A method the protocol has but 2026-07-28 does not (`ping`, `initialize`, …): the method
  // table's era gate, answered here with the rung's status.
  if (inOtherEraOnly(message.method, '2026', tasksExtension)) return { kind: 'refused', refusal: protocolRefusal.methodNotFound(), id };
  return { kind: 'request', message };
}

// Results as the revision encodes them (pure)

/** Methods whose result may be `input_required` (2026-07-28 multi-round-trip requests). */
const INPUT_REQUIRED_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** Methods whose `complete` result is cacheable (MCP 2026-07-28 server/utilities/caching). */
const CACHEABLE_METHODS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read', 'server/discover']);

/** Thrown for a result the revision cannot carry; answered -32603 "Internal error". */
export class UnencodableResult extends Error {}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `result` without the fields 2026-07-28 deleted: a listed tool's `execution`, a `tasks` capability. */
function withoutDeletedFields(method: string, result: Result): Result {
  let out = result;
  const tools = result.tools;
  if (method === 'tools/list' && Array.isArray(tools) && tools.some((tool) => isPlainObject(tool) && 'execution' in tool)) {
    out = {
      ...out,
      tools: tools.map((tool) => {
        if (!isPlainObject(tool) || !('execution' in tool)) return tool;
        const { execution: _deleted, ...rest } = tool;
        return rest;
      }),
    };
  }
  const capabilities = result.capabilities;
  if (isPlainObject(capabilities) && 'tasks' in capabilities) {
    const { tasks: _deleted, ...rest } = capabilities;
    out = { ...out, capabilities: rest };
  }
  return out;
}

/** `result` as a 2026-07-28 result of `method`, stamped with the gateway's `serverInfo`. */
export function encodeResult(method: string, result: Result, serverInfo: Implementation): Result {
  let out = withoutDeletedFields(method, result);
  const resultType = out.resultType;
  if (resultType === undefined) out = { ...out, resultType: 'complete' };
  else if (resultType !== 'complete' && !INPUT_REQUIRED_METHODS.has(method)) {
    // The upstream's value, named in a log line: its type, or at most 64 characters of a string.
    const named = typeof resultType === 'string' ? JSON.stringify(resultType.slice(0, 64)) : `of type ${typeof resultType}`;
    throw new UnencodableResult(`${method} returned resultType ${named}, which only tools/call, prompts/get and resources/read may`);
  }
  if (out.resultType === 'complete' && CACHEABLE_METHODS.has(method)) {
    const ttlMs = typeof out.ttlMs === 'number' && Number.isSafeInteger(out.ttlMs) && out.ttlMs >= 0 ? out.ttlMs : 0;
    const cacheScope = out.cacheScope === 'public' || out.cacheScope === 'private' ? out.cacheScope : 'private';
    out = { ...out, ttlMs, cacheScope };
  }
  const meta = out._meta;
  if (meta === undefined) return { ...out, _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return out;
  return { ...out, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}

/** Notifications 2026-07-28 has; a call relays no other of the protocol's (`notifications/tasks/status`, …). */
const NOTIFICATIONS_2026 = new Set([
  'notifications/cancelled',
  'notifications/progress',
  'notifications/message',
  'notifications/resources/updated',
  'notifications/resources/list_changed',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/subscriptions/acknowledged',
]);

/** Notifications of the earlier revisions that 2026-07-28 removed. */
const REMOVED_NOTIFICATIONS = new Set([
  'notifications/initialized',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
  'notifications/elicitation/complete',
]);

/**
 * Whether a call may relay notification `method` to a 2026 client of an endpoint declaring
 * `capabilities`: one the revision has (or not the protocol's at all), about a feature declared.
 */
export function relayable(method: string, capabilities: ServerCapabilities): boolean {
  if (REMOVED_NOTIFICATIONS.has(method)) return false;
  if (!NOTIFICATIONS_2026.has(method)) return true;
  switch (method) {
    case 'notifications/message':
      return capabilities.logging !== undefined;
    case 'notifications/resources/updated':
    case 'notifications/resources/list_changed':
      return capabilities.resources !== undefined;
    case 'notifications/tools/list_changed':
      return capabilities.tools !== undefined;
    case 'notifications/prompts/list_changed':
      return capabilities.prompts !== undefined;
    default:
      return true;
  }
}

// One call's answer: JSON, or SSE from the first message before the result

class CallAnswer {
  readonly response: Promise<Response>;
  private resolve!: (response: Response) => void;
  private writer: SseWriter | undefined;
  private done = false;

  /** `onGone`: the client stopped reading the stream before the result. */
  constructor(private readonly onGone: () => void) {
    this.response = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  /** A message of the call before its result: the answer becomes (or stays) an SSE stream. */
  send(message: JSONRPCMessage): void {
    if (this.done) return;
    if (this.writer === undefined) {
      const writer = new SseWriter(() => {
        if (!this.done) this.onGone();
      });
      this.writer = writer;
      writer.startKeepAlive();
      this.resolve(new Response(writer.body, { status: 200, headers: SSE_HEADERS }));
    }
    this.writer.event(message, undefined);
    // A client that reads nothing while the call talks is cut rather than buffered for (bounded).
    if (this.writer.backlogBytes > MAX_UNREAD_BYTES) this.writer.abort();
  }

  /** The call's answer, last. */
  finish(message: JSONRPCMessage, status: number): void {
    if (this.done) return;
    this.done = true;
    if (this.writer === undefined) {
      this.resolve(new Response(JSON.stringify(message), { status, headers: { 'content-type': 'application/json' } }));
      return;
    }
    this.writer.event(message, undefined);
    this.writer.close();
  }

  /** The call ended without an answer (the client went, the endpoint closed). */
  end(): void {
    if (this.done) return;
    this.done = true;
    if (this.writer === undefined) this.resolve(new Response(null, { status: 499 }));
    else this.writer.close();
  }
}

// The binding

/** Who asks: the authenticated principal and its access profile (inbound/entrance.ts). */
export interface Caller2026 {
  principal: string | undefined;
  access: AccessProfile | undefined;
}

/** How the endpoint serves one caller of the 2026 era. */
export interface Face2026 {
  /** The method table for a caller with this access profile (its capabilities and instructions follow the view). */
  readonly table: MethodTable;
  /** What `server/discover` declares to this caller: list streams honour only what is declared. */
  readonly capabilities: ServerCapabilities;
  /** The gateway's identity, stamped into every result. */
  readonly serverInfo: Implementation;
}

export interface Requests2026Options {
  /** The table, capabilities and identity for a caller with `access`. */
  face(access: AccessProfile | undefined): Face2026;
  /** The scope one request routes through: its principal's view, its workspace, the capabilities it declared. */
  scope(principal: string | undefined, workspace: string | undefined, capabilities: ClientCapabilities | undefined, access: AccessProfile | undefined): RouteScope;
  /** The endpoint's listen streams (listens-2026.ts). */
  listens: ListenStreams;
  logger: Logger;
}

/**
 * Calls `hangUp` when the client goes away before its answer is complete; returns the
 * unsubscribe, or undefined when it is gone already. Under @hono/node-server the Node request's
 * socket says so (HTTP/1.1 has no way to end one request but closing its connection): asking the
 * Fetch `Request` for its signal would make @hono/node-server build the whole WHATWG Request
 * (incoming-body.ts), which cost more than the rest of this binding in `tools/call` profiles. A
 * `Request` with no Node request behind it (tests, `app.request()`) is watched through its signal.
 */
function watchHangUp(request: Request, incoming: IncomingBody | undefined, hangUp: () => void): (() => void) | undefined {
  const socket = incoming?.socket;
  if (socket !== undefined && socket !== null) {
    if (socket.destroyed) return undefined;
    socket.once('close', hangUp);
    return () => socket.off('close', hangUp);
  }
  const signal = request.signal;
  if (signal.aborted) return undefined;
  signal.addEventListener('abort', hangUp, { once: true });
  return () => signal.removeEventListener('abort', hangUp);
}

/** A 2026 client takes no server→client request: what it is asked travels as `input_required` rounds. */
const NO_CLIENT_REQUESTS = (): Promise<never> => Promise.reject(new Error('a 2026-07-28 client takes no server-to-client requests'));

export class Requests2026 {
  /** Calls in flight, aborted when the endpoint closes. */
  private readonly inflight = new Set<AbortController>();

  constructor(private readonly options: Requests2026Options) {}

  /** Calls in flight right now. */
  get calls(): number {
    return this.inflight.size;
  }

  /**
   * Answers one 2026-era request: `outcome` is the classifier's verdict on `body`, the body the
   * endpoint read; `incoming`, the Node request under @hono/node-server, when there is one.
   */
  async serve(request: Request, body: unknown, outcome: Outcome2026, caller: Caller2026, incoming?: IncomingBody): Promise<Response> {
    const workspace = workspaceOf(body);
    if (!workspace.ok) return errorResponse(workspaceError(workspace.message));
    const face = this.options.face(caller.access);
    const tasksExtension = face.capabilities.extensions?.[TASKS_EXTENSION] !== undefined;
    const admitted = admit(outcome, body, request.headers, tasksExtension);
    if (admitted.kind === 'refused') {
      this.options.logger.debug({ status: admitted.refusal.httpStatus, code: admitted.refusal.code }, '2026 request refused by the validation ladder');
      return protocolRefusalResponse(admitted.refusal, admitted.id);
    }
    if (admitted.kind === 'notification') return new Response(null, { status: 202 });
    const message = admitted.message;
    if (message.method === 'subscriptions/listen') {
      const catalogue = () => this.options.scope(caller.principal, workspace.workspace, undefined, caller.access).catalogue;
      return this.options.listens.serve(message, { principal: caller.principal, workspace: workspace.workspace, catalogue }, face, request.signal);
    }
    const capabilities = envelopeCapabilities(message);
    const scope = this.options.scope(caller.principal, workspace.workspace, capabilities, caller.access);
    return this.call(request, incoming, message, scope, face, caller, capabilities);
  }

  /** Ends every call in flight (the endpoint is closing); listens are the listen streams' to end. */
  close(): void {
    for (const controller of [...this.inflight]) controller.abort(new Error('the endpoint closed'));
    this.inflight.clear();
  }

  private call(
    request: Request,
    incoming: IncomingBody | undefined,
    message: JSONRPCRequest,
    scope: RouteScope,
    face: Face2026,
    caller: Caller2026,
    capabilities: ClientCapabilities | undefined,
  ): Promise<Response> {
    const controller = new AbortController();
    const signal = controller.signal;
    const answer = new CallAnswer(() => controller.abort(new Error('the client stopped reading')));
    const unwatch = watchHangUp(request, incoming, () => controller.abort(new Error('the client went away')));
    if (unwatch === undefined) return Promise.resolve(new Response(null, { status: 499 }));
    this.inflight.add(controller);
    signal.addEventListener('abort', () => answer.end(), { once: true });
    const sink: DownstreamSink = {
      canRequest: false,
      clientCapabilities: capabilities ?? {},
      request: NO_CLIENT_REQUESTS,
      notify: (note: RpcMessage) => {
        // Once the call is over or cancelled, nothing more of it reaches the client.
        if (signal.aborted || !relayable(note.method, face.capabilities)) return Promise.resolve();
        answer.send({ jsonrpc: '2.0', ...note } as JSONRPCMessage);
        return Promise.resolve();
      },
    };
    const id = message.id;
    face.table
      .handle(
        { id, method: message.method, params: message.params as Params | undefined },
        { scope, signal, sink, headers: request.headers, principal: caller.principal, access: caller.access },
      )
      .then(
        (result) => {
          if (signal.aborted) return;
          let encoded: Result;
          try {
            encoded = encodeResult(message.method, result, face.serverInfo);
          } catch (error) {
            this.options.logger.warn({ rpc: message.method, err: (error as Error).message }, '2026 result not encodable');
            answer.finish(answerError(id, protocolRefusal.unencodable()) as JSONRPCMessage, 200);
            return;
          }
          answer.finish({ jsonrpc: '2.0', id, result: encoded } as JSONRPCMessage, 200);
        },
        (error: unknown) => {
          if (signal.aborted) return;
          const { message: refused, status } = answer2026Error(id, error);
          answer.finish(refused as JSONRPCMessage, status);
        },
      )
      .finally(() => {
        unwatch();
        this.inflight.delete(controller);
      });
    return answer.response;
  }
}
