/**
 * The SDK `Server` the gateway presents to a client, in either era. The SDK answers the handshake
 * (`initialize`, `server/discover`), `ping` and cancellation; every other request falls through to
 * the router. The forwarder restores what the SDK lifted out of a 2026 request (`_meta` envelope,
 * `inputResponses`, `requestState`) so the upstream sees the client's request as sent
 * (docs/decisions.md, "Behaviours the code is built around"), and maps every failure through the
 * one error taxonomy.
 */
import { ProtocolError, type Server, type ClientCapabilities, type ServerCapabilities, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { GatewayError, toJsonRpcError } from '../errors.js';
import { fixedFieldLogger, type Logger } from '../observability/logger.js';
import type { CallContext, RouteScope } from '../routing/router.js';
import { routeWithEntries, type GatewayEntries } from '../routing/gateway-entries.js';
import type { InitOptions } from '../rpc/init-options.js';
import { HandshakeServer, type Handshake } from './handshake-server.js';
import type { OptionsReader } from './init-options-reader.js';
import { CLIENT_CAPABILITIES_META_KEY } from '../rpc/client-capabilities.js';
import { passThroughResult } from '../rpc/pass-through.js';
import { requestMeta, type RequestMeta } from '../rpc/request-meta.js';
import type { DownstreamSink } from '../rpc/sink.js';
import { paramHeadersOf } from './param-headers.js';
import { sessionTag } from '../observability/session-tag.js';
import { TASKS_EXTENSION } from '../routing/tasks/task-capabilities.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { requestLabels } from '../routing/request-labels.js';
import { observeRequest, type RequestObservers } from './request-observers.js';
import type { AccessProfile } from '../policy/access-policy.js';
import type { Era } from '../rpc/era.js';


/** Client notifications relayed to a session's own upstream connections (the SDK handles the rest). */
const RELAYED_CLIENT_NOTIFICATIONS = new Set(['notifications/roots/list_changed']);

export interface GatewayServerOptions {
  name: string;
  version: string;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  era: Era;
  logger: Logger;
  /** Close a long call's SSE response after this long (resumable sessions only); absent: never. */
  pollAfterMs?: number;
  /** Where each request's duration and outcome is counted; absent: not counted. */
  metrics?: GatewayMetrics;
  /** Traces and audit lines of each request (request-observers.ts); absent: neither. */
  observers?: RequestObservers;
  /** A 2025 session's principal (a 2026 request's comes with the request); for audit lines. */
  principal?: string;
  /** What the policy's access rules let this caller see; for audit lines (the rule that hid a name). */
  access?: AccessProfile;
  /** Completes the `initialize` / `server/discover` result for the asking client; absent: the SDK's as is. */
  handshake?: Handshake;
  /** The gateway's own prompts, resources and data tools (routing/gateway-entries.ts); absent: none. */
  entries?: GatewayEntries;
  /**
   * The client's init options: a 2025 session's (read at its `initialize`), or, for 2026
   * requests, read from each request's `_meta` by this reader (bad values refused -32602).
   */
  options?: { session(): InitOptions } | { perRequest: OptionsReader };
}


/**
 * How long a server→client request may wait for the client: an elicitation waits on a person,
 * so the SDK's 60 s default is too short. The upstream's own timeout still bounds the call.
 */
const CLIENT_REQUEST_TIMEOUT_MS = 10 * 60_000;

function requestOptions(signal: AbortSignal | undefined) {
  return signal === undefined ? { timeout: CLIENT_REQUEST_TIMEOUT_MS } : { signal, timeout: CLIENT_REQUEST_TIMEOUT_MS };
}

/**
 * Where messages caused by one call go: that call's own stream. Once the call is cancelled, its
 * id may already be reused by a new request of the client; late messages of the old call are
 * dropped (a request is refused) so they can never reach the new call's stream.
 */
export function callSink(ctx: ServerContext, era: Era, clientCapabilities?: ClientCapabilities): DownstreamSink {
  const cancelled = () => ctx.mcpReq.signal.aborted;
  return {
    canRequest: era === '2025',
    ...(clientCapabilities === undefined ? {} : { clientCapabilities }),
    request: (message, signal) =>
      cancelled() ? Promise.reject(new Error('the call was cancelled')) : ctx.mcpReq.send(message, passThroughResult, requestOptions(signal)),
    notify: (message) => (cancelled() ? Promise.resolve() : ctx.mcpReq.notify(message)),
  };
}

/** Where session-level messages go: the session's standalone stream. */
export function sessionSink(server: Server): DownstreamSink {
  return {
    canRequest: true,
    get clientCapabilities() {
      return server.getClientCapabilities();
    },
    request: (message, signal) => server.request(message, passThroughResult, requestOptions(signal)),
    notify: (message) => server.notification(message),
  };
}

/**
 * What the client of one request declared: a 2025 session's `initialize`, or a 2026 request's own
 * `_meta` envelope (2026-07-28: declared per request, never carried over from another request).
 */
function requestClientCapabilities(server: Server, ctx: ServerContext, era: Era): ClientCapabilities | undefined {
  if (era === '2025') return server.getClientCapabilities();
  return (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

/**
 * The request's `_meta` as the client sent it, read once: the SDK lifts the 2026 envelope out of
 * `params`, so it is put back here. This one value goes on to the upstream link, which writes the
 * upstream request's `_meta` from it (rpc/request-meta.ts).
 */
function clientMeta(request: { params?: Record<string, unknown> }, ctx: ServerContext): RequestMeta | undefined {
  return requestMeta({
    ...((request.params?._meta as Record<string, unknown> | undefined) ?? {}),
    ...(ctx.mcpReq._meta ?? {}),
    ...(ctx.mcpReq.envelope ?? {}),
  });
}

function restoredParams(request: { params?: Record<string, unknown> }, ctx: ServerContext): Record<string, unknown> {
  const params = { ...(request.params ?? {}) };
  if (ctx.mcpReq.inputResponses !== undefined) params.inputResponses = ctx.mcpReq.inputResponses;
  const state = ctx.mcpReq.requestState();
  if (state !== undefined) params.requestState = state;
  return params;
}

const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';

/** The params of the tasks extension's `tasks/get` and `tasks/cancel` (the router checks the id). */
const TASK_ID_PARAMS = z.looseObject({ taskId: z.string() });

/**
 * A 2026 upstream stamps its own identity into each result's `_meta`; the client talks to the
 * gateway, so the upstream's stamp is dropped and the SDK stamps the gateway's.
 */
function withoutUpstreamIdentity(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined;
  if (meta === undefined || !(SERVER_INFO_KEY in meta)) return result;
  const { [SERVER_INFO_KEY]: _upstream, ...rest } = meta;
  return Object.keys(rest).length === 0 ? withoutMeta(result) : { ...result, _meta: rest };
}

function withoutMeta(result: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _dropped, ...rest } = result;
  return rest;
}

const NO_OPTIONS: InitOptions = Object.freeze({});

/** The init options that apply to one request (see `GatewayServerOptions.options`). */
function optionsOf(options: GatewayServerOptions, meta: Record<string, unknown> | undefined): InitOptions {
  const source = options.options;
  if (source === undefined) return NO_OPTIONS;
  if ('session' in source) return source.session();
  const read = source.perRequest(meta);
  if (!read.ok) throw new GatewayError('INVALID_PARAMS', read.message);
  return read.options;
}

/**
 * `scope` is asked once per request with the HTTP request it came in (a 2025 session routes each
 * by the access profile of its own token), and with none for a client notification.
 */
export function createGatewayServer(options: GatewayServerOptions, scopeOf: (request?: Request) => RouteScope): Server {
  const server = new HandshakeServer(
    { name: options.name, version: options.version },
    { capabilities: options.capabilities, instructions: options.instructions },
    options.handshake,
  );
  const rpcLog = fixedFieldLogger(options.logger);
  const forward = async (request: { method: string; params?: Record<string, unknown> }, ctx: ServerContext) => {
    const started = performance.now();
    const routed = scopeOf(ctx.http?.req);
    const scope = () => routed;
    const params = restoredParams(request, ctx);
    // Polling (SEP-1699): the stream is closed, the call goes on, the client resumes from its
    // Last-Event-ID. Offered by the SDK only when the session has an event store.
    const closeSse = ctx.http?.closeSSE;
    const poll =
      options.pollAfterMs !== undefined && closeSse !== undefined ? setTimeout(() => closeSse(), options.pollAfterMs) : undefined;
    const sink = callSink(ctx, options.era, requestClientCapabilities(server, ctx, options.era) ?? {});
    const call: CallContext = { sink, signal: ctx.mcpReq.signal, meta: clientMeta(request, ctx), era: options.era };
    const paramHeaders = options.era === '2026' ? paramHeadersOf(ctx.http?.req?.headers) : undefined;
    if (paramHeaders !== undefined) call.headers = paramHeaders;
    const line: Record<string, unknown> = { rpc: request.method, session: sessionTag(ctx.sessionId), era: options.era };
    if (request.method === 'tools/call' || request.method === 'prompts/get') line.name = params.name;
    const metrics = options.metrics;
    // Labels come from the catalogue, never from the request as sent (metrics.ts).
    const labels = metrics === undefined ? undefined : requestLabels(scope(), request.method, params);
    // Counted before the answer leaves, so a scrape after a response always includes it.
    const observe = async (outcome: 'ok' | 'error') => {
      if (metrics === undefined || labels === undefined) return;
      const seconds = (performance.now() - started) / 1000;
      metrics.observeRequest({ ...(await labels), outcome, seconds });
    };
    // Traces and audit: nothing is built for them when both are off (request-observers.ts).
    const observed =
      options.observers === undefined
        ? undefined
        : observeRequest(options.observers, {
            method: request.method,
            params,
            sessionId: ctx.sessionId,
            requestId: ctx.mcpReq.id,
            principal: options.era === '2025' ? options.principal : ctx.http?.authInfo?.clientId,
            headers: ctx.http?.req?.headers,
            meta: call.meta,
            access: routed.access ?? options.access,
          });
    try {
      const initOptions = optionsOf(options, call.meta);
      const route = () => routeWithEntries(options.entries, scope(), request.method, params, call, initOptions);
      const result = withoutUpstreamIdentity(await (observed === undefined ? route() : observed.run(route)));
      rpcLog.info({ ...line, outcome: 'ok', ms: Math.round(performance.now() - started) }, 'rpc');
      observed?.finish();
      await observe('ok');
      return result as never;
    } catch (error) {
      const wire = toJsonRpcError(error, options.era);
      rpcLog.info({ ...line, outcome: 'error', code: wire.code, ms: Math.round(performance.now() - started) }, 'rpc');
      observed?.finish(error);
      await observe('error');
      throw new ProtocolError(wire.code, wire.message, wire.data);
    } finally {
      if (poll !== undefined) clearTimeout(poll);
    }
  };
  server.fallbackRequestHandler = (request, ctx) => forward(request as never, ctx);
  if (options.capabilities.logging !== undefined && options.era === '2025') {
    // The SDK answers logging/setLevel itself when logging is declared; the level belongs to
    // the upstreams that log, so route it (the SDK still validates the level first).
    server.setRequestHandler('logging/setLevel', (request, ctx) => forward(request as never, ctx));
  }
  if (options.era === '2026' && options.capabilities.extensions?.[TASKS_EXTENSION] !== undefined) {
    // 2026-07-28 removed tasks/get and tasks/cancel from the core; the tasks extension reuses
    // the names, which the SDK dispatches only to a handler registered with its own schema.
    for (const method of ['tasks/get', 'tasks/cancel'] as const) {
      server.setRequestHandler(method, { params: TASK_ID_PARAMS }, (params, ctx) => forward({ method, params: params as Record<string, unknown> }, ctx));
    }
  }
  server.fallbackNotificationHandler = async (notification) => {
    // Only what a client may say to a server is relayed, and without anything else it carried.
    if (RELAYED_CLIENT_NOTIFICATIONS.has(notification.method)) scopeOf().broadcast?.({ method: notification.method });
  };
  return server;
}
