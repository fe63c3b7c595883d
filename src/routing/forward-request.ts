/**
 * Forwarding one request of the router's (router.ts) to the upstream that owns it, through the
 * scope's link to that server, and the `input_required` rounds (MCP 2026-07-28, multi-round-trip
 * requests): a 2026 client gets an upstream's `input_required` as is, and a 2025 upstream's
 * mid-call requests as such rounds through the scope's input bridge (input-bridge.ts); for a 2025
 * client the gateway fulfils them itself — each embedded request sent to the client on the
 * call's stream, then a retry — at most `MAX_INPUT_ROUNDS` times, and only requests the client
 * declared it can answer.
 */
import { GatewayError } from '../errors.js';
import { checkServerRequest } from '../rpc/client-capabilities.js';
import type { DownstreamSink } from '../rpc/sink.js';
import type { UpstreamLink } from '../upstream/link.js';
import type { CallContext, RouteScope } from './router.js';

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

/** Most `input_required` rounds the gateway drives for a 2025 client before giving up. */
const MAX_INPUT_ROUNDS = 8;

/** The requests that may answer `input_required` (2026-07-28, multi-round-trip requests). */
const INPUT_CAPABLE = new Set(['tools/call', 'prompts/get', 'resources/read']);

/**
 * Forwards one request to `server`. `observe` sees the connection and the final result while
 * the connection is still held (a task created upstream lives on that very connection).
 */
export async function forwardRequest(
  scope: RouteScope,
  server: string,
  method: string,
  params: Params,
  call: CallContext,
  observe?: (link: UpstreamLink, result: Result) => Result,
): Promise<Result> {
  const onLink = <T>(fn: (link: UpstreamLink) => Promise<T>): Promise<T> =>
    observe !== undefined && scope.withTaskLink !== undefined ? scope.withTaskLink(server, fn) : scope.withLink(server, fn);
  const upstreamCall = (sink: DownstreamSink, signal: AbortSignal) =>
    onLink(async (link) => {
      let roundParams = params;
      for (let round = 0; ; round++) {
        // The link writes the upstream `_meta` from the client's (rpc/request-meta.ts).
        const result = await link.request(method, roundParams, { sink, signal, meta: call.meta, headers: call.headers });
        if (result.resultType !== 'input_required' || call.era === '2026') return observe === undefined ? result : observe(link, result);
        if (round >= MAX_INPUT_ROUNDS) {
          throw new GatewayError('UPSTREAM_UNAVAILABLE', `upstream "${server}" asked for input too many times`, { server });
        }
        roundParams = { ...params, ...(await fulfilInputRequests(result, call)) };
      }
    });
  const bridge = scope.inputBridge;
  if (call.era === '2026' && bridge !== undefined && INPUT_CAPABLE.has(method)) {
    // A retry carrying our own requestState resumes the suspended call; any other state is an
    // upstream's own and travels with the request.
    if (bridge.owns(params.requestState)) return bridge.resume(params.requestState, params.inputResponses, call.sink, call.signal);
    return bridge.start(call.sink, call.signal, upstreamCall);
  }
  return upstreamCall(call.sink, call.signal);
}

/**
 * A 2026 upstream asked for client input but the client speaks 2025: send each embedded request
 * to the client on the call's stream and retry with the answers and the opaque state, byte-exact.
 */
async function fulfilInputRequests(result: Result, call: CallContext): Promise<Params> {
  const requests = (result.inputRequests ?? {}) as Record<string, { method: string; params?: Params }>;
  // Nothing the client did not declare reaches it: the call fails instead of asking.
  for (const request of Object.values(requests)) {
    const allowed = checkServerRequest(call.sink.clientCapabilities, request.method, request.params);
    if (!allowed.ok) throw new GatewayError(allowed.code, allowed.message);
  }
  const entries = await Promise.all(
    Object.entries(requests).map(async ([key, request]) => [key, await call.sink.request(request, call.signal)] as const),
  );
  const next: Params = { inputResponses: Object.fromEntries(entries) };
  if (result.requestState !== undefined) next.requestState = result.requestState;
  return next;
}
