/**
 * JSON-RPC dispatch for everything the gateway does not answer itself (the method table,
 * inbound/method-table.ts, answers `initialize`, `server/discover` and `ping`): list requests fan out through the catalogue, and
 * every call, read, get, completion and subscription goes to the one upstream that owns its name.
 *
 * A name the catalogue does not show — unknown, or hidden by a filter — gets the same answer, so
 * a filter cannot be probed; policy is applied when lists merge and again here on every call.
 * The request then goes to its upstream through `forwardRequest` below.
 */
import { GatewayError } from '../errors.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { MergedTools } from '../catalogue/merge.js';
import type { ToolsView } from '../catalogue/surface/tool-surface.js';
import { routeResourceUri } from '../catalogue/build-index.js';
import { exposeReadResult, exposeUiMeta } from '../catalogue/ui-uris.js';
import type { UpstreamLink } from '../upstream/link.js';
import type { ListKind } from '../upstream/list-cache.js';
import type { RequestMeta } from '../rpc/request-meta.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';
import type { CallerResources } from './gateway-resources.js';
import type { InputRounds } from './input-bridge.js';
import { presentTaskSupport } from './tasks/task-capabilities.js';
import type { TaskScope } from './tasks/task-scope.js';
import type { AccessProfile } from '../policy/access-policy.js';
import type { Era } from '../rpc/era.js';
import { checkServerRequest } from '../rpc/client-capabilities.js';
type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

/** Runs `fn` with a link to one server held for the call. */
export type LinkRunner = <T>(server: string, fn: (link: UpstreamLink) => Promise<T>) => Promise<T>;

/**
 * What one caller's requests are routed through: its view (servers, catalogue, the access profile
 * it was narrowed by) and its connections. Every member is required, an absent capability spelt
 * `undefined`, so each place that builds a scope — a session's, a 2026 principal's, one narrowed
 * per request (access-scope.ts) — must name every member: one added later is a compile error
 * there, never silently missing for some callers.
 */
export interface RouteScope {
  /** Servers visible in this scope, in merge order. */
  readonly servers: readonly string[];
  readonly catalogue: Catalogue;
  /** The caller's access profile the catalogue was narrowed by (for audit lines); undefined: none, or not known here. */
  readonly access: AccessProfile | undefined;
  /** Deferral, meta-tools and pagination of `tools/list`; undefined: the merged list as is. */
  readonly tools: ToolsView | undefined;
  /** Runs `fn` with a link to `server` held for the duration of the call. */
  readonly withLink: LinkRunner;
  /** Where a call that may create a task runs (the task lives there); undefined: `withLink`. */
  readonly withTaskLink: LinkRunner | undefined;
  /** Notes a resource subscription so `resources/updated` reaches this client (session scopes); undefined: nothing to note. */
  readonly noteSubscription: ((server: string, uri: string, subscribed: boolean) => void) | undefined;
  /** Relays a client notification (e.g. roots/list_changed) to the scope's own connections; undefined: it has none. */
  readonly broadcast: ((message: RpcMessage) => void) | undefined;
  /** `logging/setLevel` for a scope that opens connections lazily (session scopes); undefined: each server's link gets it. */
  readonly setLogLevel: ((params: Params, sink: DownstreamSink) => Promise<void>) | undefined;
  /** Turns a 2025 upstream's mid-call requests into `input_required` rounds (2026 clients); undefined: not bridged. */
  readonly inputBridge: InputRounds | undefined;
  /** The caller's tasks (tasks/task-scope.ts); undefined: tasks are not offered here. */
  readonly tasks: TaskScope | undefined;
  /** Resources the gateway serves itself, as this caller sees them (gateway-resources.ts); undefined: none. */
  readonly gatewayResources: CallerResources | undefined;
  /**
   * Spends the caller's rate for one catalogue tool (its `toolCalls` budget); throws
   * `RATE_LIMITED` when spent. Undefined: not limited. The request itself was charged at the
   * entrance (inbound/entrance.ts), before any dispatch.
   */
  readonly admitTool: ((tool: string) => Promise<void>) | undefined;
}

export interface CallContext {
  sink: DownstreamSink;
  signal: AbortSignal;
  /** The client's `_meta` (progress token, envelope keys), handed to the link as is (rpc/request-meta.ts). */
  meta: RequestMeta | undefined;
  /** `legacy` clients have input requests of a 2026 upstream fulfilled by the gateway. */
  era: Era;
  /** HTTP headers passed on to the upstream as they came (a 2026 request's `Mcp-Param-*`). */
  headers?: Record<string, string>;
}

type Handler = (scope: RouteScope, params: Params, call: CallContext) => Promise<Result>;

/**
 * A merged list as the client's era wants it. A 2026 result carries `ttlMs` and `cacheScope`
 * (MCP 2026-07-28, server/utilities/caching): never a longer life than every upstream part still
 * has, and `private` unless every part is public and none is the caller's own.
 */
async function listResult(scope: RouteScope, kind: ListKind, field: string, call: CallContext): Promise<Result> {
  const { value, hint } = await scope.catalogue.listing(kind);
  return call.era === '2026' ? { [field]: value, ttlMs: hint.ttlMs, cacheScope: hint.cacheScope } : { [field]: value };
}

const handlers: Record<string, Handler> = {
  'tools/list': async (scope, params, call) => {
    const merged = await scope.catalogue.tools();
    const presented = presentTasks(scope, merged.tools, merged.index, call);
    const listed = presented === merged.tools ? merged : { ...merged, tools: presented };
    const { result, callerLoaded } = scope.tools === undefined ? { result: { tools: listed.tools }, callerLoaded: false } : await scope.tools.list(listed, params, call);
    if (call.era !== '2026') return result;
    // The merged list's own hint holds (per-principal parts already made it private), unless the
    // list shows tools this caller loaded: those are its own, and change with its next load.
    if (callerLoaded) return { ...result, ttlMs: 0, cacheScope: 'private' };
    const { hint } = await scope.catalogue.listing('tools');
    return { ...result, ttlMs: hint.ttlMs, cacheScope: hint.cacheScope };
  },
  'prompts/list': (scope, _params, call) => listResult(scope, 'prompts', 'prompts', call),
  'resources/list': async (scope, _params, call) => {
    const result = await listResult(scope, 'resources', 'resources', call);
    const own = scope.gatewayResources?.resources;
    return own === undefined || own.length === 0 ? result : { ...result, resources: [...own, ...(result.resources as unknown[])] };
  },
  'resources/templates/list': (scope, _params, call) => listResult(scope, 'resourceTemplates', 'resourceTemplates', call),

  // A meta-tool (search_tools, call_tool) when tools are deferred; else, and for call_tool's
  // own target, the one path every tool call takes.
  'tools/call': async (scope, params, call) => {
    const meta = scope.tools?.callMeta(await scope.catalogue.tools(), params, call, (inner) => callTool(scope, inner, call));
    return meta ?? callTool(scope, params, call);
  },

  'tasks/get': (scope, params, call) => taskRequest(scope, 'tasks/get', params, call),
  'tasks/result': (scope, params, call) => taskRequest(scope, 'tasks/result', params, call),
  'tasks/list': (scope, params, call) => taskRequest(scope, 'tasks/list', params, call),
  'tasks/cancel': (scope, params, call) => taskRequest(scope, 'tasks/cancel', params, call),
  'tasks/update': (scope, params, call) => taskRequest(scope, 'tasks/update', params, call),

  'prompts/get': async (scope, params, call) => {
    const exposed = stringParam(params, 'name');
    const args = objectParam(params, 'arguments');
    if (args !== undefined && !Object.values(args).every((v) => typeof v === 'string')) {
      throw new GatewayError('INVALID_PARAMS', '"arguments" of prompts/get must map names to strings');
    }
    const target = (await scope.catalogue.prompts()).index.get(exposed);
    if (target === undefined) throw new GatewayError('UNKNOWN_PROMPT', `Unknown prompt: ${exposed}`);
    return forwardRequest(scope, target.server, 'prompts/get', { ...params, name: target.name }, call);
  },

  // A `ui://` URI the gateway rewrote goes to its owner as the owner knows it (ui-uris.ts).
  'resources/read': async (scope, params, call) => {
    const uri = stringParam(params, 'uri');
    const own = scope.gatewayResources;
    if (own?.owns(uri) === true) return own.read(uri);
    const target = await ownerOfUri(scope, uri);
    const result = await forwardRequest(scope, target.server, 'resources/read', { ...params, uri: target.uri }, call);
    return exposeReadResult(result, target.uri, uri);
  },

  'resources/subscribe': async (scope, params, call) => {
    const uri = stringParam(params, 'uri');
    const own = scope.gatewayResources;
    if (own?.owns(uri) === true) {
      own.subscribe(uri);
      return {};
    }
    const target = await ownerOfUri(scope, uri);
    const result = await forwardRequest(scope, target.server, 'resources/subscribe', { ...params, uri: target.uri }, call);
    scope.noteSubscription?.(target.server, target.uri, true);
    return result;
  },

  'resources/unsubscribe': async (scope, params, call) => {
    const uri = stringParam(params, 'uri');
    const own = scope.gatewayResources;
    if (own?.owns(uri) === true) {
      own.unsubscribe(uri);
      return {};
    }
    const target = await ownerOfUri(scope, uri);
    scope.noteSubscription?.(target.server, target.uri, false);
    return forwardRequest(scope, target.server, 'resources/unsubscribe', { ...params, uri: target.uri }, call);
  },

  'completion/complete': async (scope, params, call) => {
    const ref = params.ref as Params | undefined;
    if (ref?.type === 'ref/prompt') {
      const exposed = stringParam(ref, 'name');
      const target = (await scope.catalogue.prompts()).index.get(exposed);
      if (target === undefined) throw new GatewayError('UNKNOWN_PROMPT', `Unknown prompt: ${exposed}`);
      return forwardRequest(scope, target.server, 'completion/complete', { ...params, ref: { ...ref, name: target.name } }, call);
    }
    if (ref?.type === 'ref/resource') {
      const uri = stringParam(ref, 'uri');
      const { routes } = await scope.catalogue.templates();
      const owner = routes.find((r) => r.uriTemplate === uri)?.server ?? (await ownerOfUri(scope, uri)).server;
      return forwardRequest(scope, owner, 'completion/complete', params, call);
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
      scope.servers.filter((server) => scope.catalogue.showsServer(server)).map((server) =>
        scope
          .withLink(server, async (link) => {
            if (link.capabilities.logging !== undefined) await link.request('logging/setLevel', params, { sink: call.sink, meta: call.meta });
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

async function callTool(scope: RouteScope, params: Params, call: CallContext): Promise<Result> {
  const exposed = stringParam(params, 'name');
  objectParam(params, 'arguments');
  const merged = await scope.catalogue.tools();
  const target = merged.index.get(exposed);
  // The index holds visible tools only; the predicate runs again anyway (docs/decisions.md,
  // "Hidden means not callable").
  const visible = target !== undefined && scope.catalogue.toolVisible(target.server, target.name, exposed);
  // Only a catalogue name keys a tool's rate: names a client makes up spend nothing more.
  if (visible) await scope.admitTool?.(exposed);
  if (!visible) {
    // A tool the filters show but tool integrity holds: never relayed, and the caller is told why.
    const held = target === undefined ? merged.held.get(exposed) : undefined;
    if (held !== undefined) {
      throw new GatewayError(
        'TOOL_PENDING_APPROVAL',
        held.verdict === 'rejected'
          ? `Tool ${exposed} is held: an admin rejected its current definition`
          : `Tool ${exposed} is held: its definition ${held.verdict === 'flooded' ? 'belongs to a server listing more new definitions than allowed' : 'is not the approved one'} and awaits an admin's approval`,
        { server: held.server, data: { tool: exposed } },
      );
    }
    const down = target === undefined ? scope.catalogue.unavailableOwnerOf(exposed) : undefined;
    if (down !== undefined) throw scope.catalogue.unavailableBecause(down) ?? new GatewayError('UPSTREAM_UNAVAILABLE', `upstream "${down}" is unavailable`, { server: down });
    throw new GatewayError('UNKNOWN_TOOL', `Unknown tool: ${exposed}`);
  }
  const upstreamParams = { ...params, name: target.name };
  const tasks = scope.tasks;
  // A result pointing at a `ui://` App names it as the tool list did.
  const expose = (result: Result) => exposeUiMeta(result, target.server, merged.ui);
  if (tasks === undefined) return expose(await forwardRequest(scope, target.server, 'tools/call', upstreamParams, call));
  const tool = tasks.takesTasks(target.server) ? merged.tools.find((t) => t.name === exposed) : undefined;
  return expose(await tasks.callTool(target.server, tool, upstreamParams, call, (p, observe) => forwardRequest(scope, target.server, 'tools/call', p, call, observe)));
}

/**
 * Task support is shown only where the gateway can honour it (tasks/task-capabilities.ts);
 * returns `tools` itself when nothing changes.
 */
function presentTasks(scope: RouteScope, tools: MergedTools['tools'], index: MergedTools['index'], call: CallContext): MergedTools['tools'] {
  const tasks = scope.tasks;
  if (tasks === undefined) return tools;
  const takes = new Map<string, boolean>(); // asked once per server, not per tool
  const takesTasks = (server: string | undefined) => {
    if (server === undefined) return false;
    if (!takes.has(server)) takes.set(server, tasks.takesTasks(server));
    return takes.get(server) === true;
  };
  return tools.map((tool) => (tool.execution === undefined ? tool : presentTaskSupport(tool, takesTasks(index.get(tool.name)?.server), call.era)));
}

function taskRequest(scope: RouteScope, method: string, params: Params, call: CallContext): Promise<Result> {
  if (scope.tasks === undefined) throw new GatewayError('NOT_SUPPORTED', `Method not found: ${method}`);
  return scope.tasks.request(method, params, call);
}

/**
 * The server that owns `uri`, and the URI it knows it by: a `ui://` URI of an App first (listed,
 * or only named by a tool; rewritten when servers share it), then the listed and templated URIs.
 */
async function ownerOfUri(scope: RouteScope, uri: string): Promise<{ server: string; uri: string }> {
  const [resources, templates] = await Promise.all([scope.catalogue.resources(), scope.catalogue.templates()]);
  const app = resources.ui.target(uri);
  if (app !== undefined) return app;
  const owner = routeResourceUri(uri, resources.index, templates.routes);
  if (owner === undefined) throw new GatewayError('UNKNOWN_RESOURCE', `Resource not found: ${uri}`, { data: { uri } });
  return { server: owner, uri };
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

/*
 * Forwarding one request of the router's to the upstream that owns it, through the
 * scope's link to that server, and the `input_required` rounds (MCP 2026-07-28, multi-round-trip
 * requests): a 2026 client gets an upstream's `input_required` as is, and a 2025 upstream's
 * mid-call requests as such rounds through the scope's input bridge (input-bridge.ts); for a 2025
 * client the gateway fulfils them itself — each embedded request sent to the client on the
 * call's stream, then a retry — at most `MAX_INPUT_ROUNDS` times, and only requests the client
 * declared it can answer.
 */

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
