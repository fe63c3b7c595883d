/**
 * The SDK `Server` the gateway presents to a 2025-era session, as a binding of the gateway's own
 * method table (method-table.ts): the SDK parses and correlates, keeps the handshake's
 * bookkeeping (the client's capabilities, the negotiated version) and cancellation; every request
 * it dispatches, the handshake's included, is answered by the table. What the SDK lifted out of
 * a request (`inputResponses`, `requestState`, reserved `_meta` keys) is put back first, so the
 * table sees the client's request as sent (docs/decisions.md, "Behaviours the code is built
 * around"). 2026-era requests never reach an SDK `Server` (request-2026.ts).
 */
import type { Server, ClientCapabilities, ServerCapabilities, ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from '../observability/logger.js';
import type { RouteScope } from '../routing/router.js';
import type { GatewayEntries } from '../routing/gateway-entries.js';
import type { InitOptions } from '../rpc/init-options.js';
import { HandshakeServer } from './handshake-server.js';
import type { OptionsReader } from './init-options-reader.js';
import { passThroughResult } from '../rpc/pass-through.js';
import type { DownstreamSink } from '../rpc/sink.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { RequestObservers } from './request-observers.js';
import type { AccessProfile } from '../policy/access-policy.js';
import type { Era } from '../rpc/era.js';
import { createMethodTable, type Handshake, type InboundRequest, type MethodCall } from './method-table.js';


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
  /** The session's principal; for audit lines. */
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

/**
 * The request as the client sent it: the SDK lifts the reserved `_meta` keys, `inputResponses`
 * and `requestState` out of `params`; they are put back here for the method table.
 */
function asSent(request: { method: string; params?: Record<string, unknown> }, ctx: ServerContext): InboundRequest {
  const params = { ...(request.params ?? {}) };
  const meta = { ...((request.params?._meta as Record<string, unknown> | undefined) ?? {}), ...(ctx.mcpReq._meta ?? {}), ...(ctx.mcpReq.envelope ?? {}) };
  if (Object.keys(meta).length > 0) params._meta = meta;
  if (ctx.mcpReq.inputResponses !== undefined) params.inputResponses = ctx.mcpReq.inputResponses;
  const state = ctx.mcpReq.requestState();
  if (state !== undefined) params.requestState = state;
  return { id: ctx.mcpReq.id, method: request.method, params };
}

/**
 * `scope` is asked once per request with the HTTP request it came in (a 2025 session routes each
 * by the access profile of its own token), and with none for a client notification.
 */
export function createGatewayServer(options: GatewayServerOptions, scopeOf: (request?: Request) => RouteScope): Server {
  const table = createMethodTable({
    era: options.era,
    name: options.name,
    version: options.version,
    capabilities: options.capabilities,
    instructions: options.instructions,
    logger: options.logger,
    pollAfterMs: options.pollAfterMs,
    metrics: options.metrics,
    observers: options.observers,
    handshake: options.handshake,
    entries: options.entries,
    options: options.options,
  });
  const answer = (request: { method: string; params?: Record<string, unknown> }, ctx: ServerContext) => {
    const call: MethodCall = {
      scope: scopeOf(ctx.http?.req),
      signal: ctx.mcpReq.signal,
      sink: callSink(ctx, options.era, server.getClientCapabilities() ?? {}),
      headers: ctx.http?.req?.headers,
      principal: options.principal,
      access: options.access,
      sessionId: ctx.sessionId,
      closeSse: ctx.http?.closeSSE,
    };
    return table.handle(asSent(request, ctx), call) as Promise<never>;
  };
  // The SDK still keeps its own handshake state (the client's capabilities, the negotiated
  // version); the answer is the method table's.
  const server = new HandshakeServer(
    { name: options.name, version: options.version },
    { capabilities: options.capabilities, instructions: options.instructions },
    (request, ctx) => answer(request as never, ctx),
  );
  server.fallbackRequestHandler = (request, ctx) => answer(request as never, ctx);
  server.setRequestHandler('ping', (request, ctx) => answer(request as never, ctx));
  if (options.capabilities.logging !== undefined && options.era === '2025') {
    // The SDK answers logging/setLevel itself when logging is declared; the level belongs to
    // the upstreams that log, so route it (the SDK still validates the level first).
    server.setRequestHandler('logging/setLevel', (request, ctx) => answer(request as never, ctx));
  }
  server.fallbackNotificationHandler = async (notification) => {
    // Only what a client may say to a server is relayed, and without anything else it carried.
    if (RELAYED_CLIENT_NOTIFICATIONS.has(notification.method)) scopeOf().broadcast?.({ method: notification.method });
  };
  return server;
}
