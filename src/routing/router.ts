/**
 * JSON-RPC dispatch for everything the gateway does not answer itself (the SDK `Server` answers
 * `initialize`, `server/discover` and `ping`): list requests fan out through the catalogue, and
 * every call, read, get, completion and subscription goes to the one upstream that owns its name.
 *
 * A name the catalogue does not show — unknown, or hidden by a filter — gets the same answer, so
 * a filter cannot be probed; policy is applied when lists merge and again here on every call.
 */
import { GatewayError } from '../errors.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { routeResourceUri } from '../catalogue/build-index.js';
import type { UpstreamLink } from '../upstream/link.js';
import type { ListKind } from '../upstream/list-cache.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';
import type { InputRounds } from './input-bridge.js';

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

export interface RouteScope {
  /** Servers visible in this scope, in merge order. */
  readonly servers: readonly string[];
  readonly catalogue: Catalogue;
  /** Runs `fn` with a link to `server` held for the duration of the call. */
  withLink<T>(server: string, fn: (link: UpstreamLink) => Promise<T>): Promise<T>;
  /** Notes a resource subscription so `resources/updated` reaches this client (session scopes). */
  noteSubscription?(server: string, uri: string, subscribed: boolean): void;
  /** Relays a client notification (e.g. roots/list_changed) to the scope's own connections. */
  broadcast?(message: RpcMessage): void;
  /** `logging/setLevel` for a scope that opens connections lazily (session scopes); else each server's link gets it. */
  setLogLevel?(params: Params, sink: DownstreamSink): Promise<void>;
  /** Turns a 2025 upstream's mid-call requests into `input_required` rounds (2026 clients). */
  readonly inputBridge?: InputRounds;
}

export interface CallContext {
  sink: DownstreamSink;
  signal: AbortSignal;
  /** The client's `_meta` (progress token, envelope keys) to forward upstream. */
  meta: Params | undefined;
  /** `legacy` clients have input requests of a 2026 upstream fulfilled by the gateway. */
  era: 'legacy' | 'modern';
}

/** Most `input_required` rounds the gateway drives for a 2025 client before giving up. */
const MAX_INPUT_ROUNDS = 8;

/** The requests that may answer `input_required` (2026-07-28, multi-round-trip requests). */
const INPUT_CAPABLE = new Set(['tools/call', 'prompts/get', 'resources/read']);

type Handler = (scope: RouteScope, params: Params, call: CallContext) => Promise<Result>;

/**
 * A merged list as the client's era wants it. A 2026 result carries `ttlMs` and `cacheScope`
 * (MCP 2026-07-28, server/utilities/caching): never a longer life than every upstream part still
 * has, and `private` unless every part is public and none is the caller's own.
 */
async function listResult(scope: RouteScope, kind: ListKind, field: string, call: CallContext): Promise<Result> {
  const { value, hint } = await scope.catalogue.listing(kind);
  return call.era === 'modern' ? { [field]: value, ttlMs: hint.ttlMs, cacheScope: hint.cacheScope } : { [field]: value };
}

const handlers: Record<string, Handler> = {
  'tools/list': (scope, _params, call) => listResult(scope, 'tools', 'tools', call),
  'prompts/list': (scope, _params, call) => listResult(scope, 'prompts', 'prompts', call),
  'resources/list': (scope, _params, call) => listResult(scope, 'resources', 'resources', call),
  'resources/templates/list': (scope, _params, call) => listResult(scope, 'resourceTemplates', 'resourceTemplates', call),

  'tools/call': async (scope, params, call) => {
    const exposed = stringParam(params, 'name');
    objectParam(params, 'arguments');
    const target = (await scope.catalogue.tools()).index.get(exposed);
    // The index holds visible tools only; the predicate runs again anyway (DESIGN.md §3).
    if (target === undefined || !scope.catalogue.toolVisible(target.server, target.name, exposed)) {
      const down = target === undefined ? scope.catalogue.unavailableOwnerOf(exposed) : undefined;
      if (down !== undefined) throw new GatewayError('UPSTREAM_UNAVAILABLE', `upstream "${down}" is unavailable`, { server: down });
      throw new GatewayError('UNKNOWN_TOOL', `Unknown tool: ${exposed}`);
    }
    return forward(scope, target.server, 'tools/call', { ...params, name: target.name }, call);
  },

  'prompts/get': async (scope, params, call) => {
    const exposed = stringParam(params, 'name');
    const args = objectParam(params, 'arguments');
    if (args !== undefined && !Object.values(args).every((v) => typeof v === 'string')) {
      throw new GatewayError('INVALID_PARAMS', '"arguments" of prompts/get must map names to strings');
    }
    const target = (await scope.catalogue.prompts()).index.get(exposed);
    if (target === undefined) throw new GatewayError('UNKNOWN_PROMPT', `Unknown prompt: ${exposed}`);
    return forward(scope, target.server, 'prompts/get', { ...params, name: target.name }, call);
  },

  'resources/read': async (scope, params, call) =>
    forward(scope, await ownerOfUri(scope, stringParam(params, 'uri')), 'resources/read', params, call),

  'resources/subscribe': async (scope, params, call) => {
    const uri = stringParam(params, 'uri');
    const server = await ownerOfUri(scope, uri);
    const result = await forward(scope, server, 'resources/subscribe', params, call);
    scope.noteSubscription?.(server, uri, true);
    return result;
  },

  'resources/unsubscribe': async (scope, params, call) => {
    const uri = stringParam(params, 'uri');
    const server = await ownerOfUri(scope, uri);
    scope.noteSubscription?.(server, uri, false);
    return forward(scope, server, 'resources/unsubscribe', params, call);
  },

  'completion/complete': async (scope, params, call) => {
    const ref = params.ref as Params | undefined;
    if (ref?.type === 'ref/prompt') {
      const exposed = stringParam(ref, 'name');
      const target = (await scope.catalogue.prompts()).index.get(exposed);
      if (target === undefined) throw new GatewayError('UNKNOWN_PROMPT', `Unknown prompt: ${exposed}`);
      return forward(scope, target.server, 'completion/complete', { ...params, ref: { ...ref, name: target.name } }, call);
    }
    if (ref?.type === 'ref/resource') {
      const uri = stringParam(ref, 'uri');
      const { routes } = await scope.catalogue.templates();
      const owner = routes.find((r) => r.uriTemplate === uri)?.server ?? (await ownerOfUri(scope, uri));
      return forward(scope, owner, 'completion/complete', params, call);
    }
    throw new GatewayError('INVALID_PARAMS', 'completion/complete needs a ref of type ref/prompt or ref/resource');
  },

  'logging/setLevel': async (scope, params, call) => {
    if (scope.setLogLevel !== undefined) {
      await scope.setLogLevel(params, call.sink);
      return {};
    }
    // Every upstream that logs gets the level; one that fails does not fail the others.
    await Promise.all(
      scope.servers.map((server) =>
        scope
          .withLink(server, async (link) => {
            if (link.capabilities.logging !== undefined) await link.request('logging/setLevel', params, { sink: call.sink });
          })
          .catch(() => undefined),
      ),
    );
    return {};
  },
};

/** Dispatches one client request; throws a `GatewayError` or relays the upstream's own error. */
export async function routeRequest(scope: RouteScope, method: string, params: Params | undefined, call: CallContext): Promise<Result> {
  const handler = Object.hasOwn(handlers, method) ? handlers[method] : undefined;
  if (handler === undefined) throw new GatewayError('NOT_SUPPORTED', `Method not found: ${method}`);
  return handler(scope, params ?? {}, call);
}

async function forward(scope: RouteScope, server: string, method: string, params: Params, call: CallContext): Promise<Result> {
  const outbound: Params = { ...params };
  delete outbound._meta;
  const meta = call.meta === undefined ? undefined : { ...call.meta };
  const progressToken = meta?.progressToken as string | number | undefined;
  if (meta !== undefined) {
    delete meta.progressToken; // the SDK sets its own token and we map progress back
    if (Object.keys(meta).length > 0) outbound._meta = meta;
  }
  const upstreamCall = (sink: DownstreamSink, signal: AbortSignal) =>
    scope.withLink(server, async (link) => {
      let roundParams = outbound;
      for (let round = 0; ; round++) {
        const result = await link.request(method, roundParams, { sink, signal, progressToken });
        if (result.resultType !== 'input_required' || call.era === 'modern') return result;
        if (round >= MAX_INPUT_ROUNDS) {
          throw new GatewayError('UPSTREAM_UNAVAILABLE', `upstream "${server}" asked for input too many times`, { server });
        }
        roundParams = { ...outbound, ...(await fulfilInputRequests(result, call)) };
      }
    });
  const bridge = scope.inputBridge;
  if (call.era === 'modern' && bridge !== undefined && INPUT_CAPABLE.has(method)) {
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
  const entries = await Promise.all(
    Object.entries(requests).map(async ([key, request]) => [key, await call.sink.request(request, call.signal)] as const),
  );
  const next: Params = { inputResponses: Object.fromEntries(entries) };
  if (result.requestState !== undefined) next.requestState = result.requestState;
  return next;
}

async function ownerOfUri(scope: RouteScope, uri: string): Promise<string> {
  const [resources, templates] = await Promise.all([scope.catalogue.resources(), scope.catalogue.templates()]);
  const owner = routeResourceUri(uri, resources.index, templates.routes);
  if (owner === undefined) throw new GatewayError('UNKNOWN_RESOURCE', `Resource not found: ${uri}`);
  return owner;
}

/** An optional parameter that, when present, must be a JSON object (not an array or scalar). */
function objectParam(params: Params, key: string): Params | undefined {
  const value = params[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('INVALID_PARAMS', `"${key}" must be an object`);
  }
  return value as Params;
}

function stringParam(params: Params, key: string): string {
  const value = params[key];
  if (typeof value !== 'string') throw new GatewayError('INVALID_PARAMS', `"${key}" must be a string`);
  return value;
}
