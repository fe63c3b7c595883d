/**
 * 2026-07-28 `subscriptions/listen` streams of one endpoint (MCP 2026-07-28 basic/patterns/
 * subscriptions): each listen is one SSE answer that opens with
 * `notifications/subscriptions/acknowledged` naming what will be delivered, then carries the
 * changes its filter asked for, each stamped with the listen's `subscriptionId` (its request id),
 * with `: keepalive` comments between. It ends when the client hangs up, or, when the endpoint
 * closes (shutdown, drain), with the empty `complete` result that says the server ended it.
 *
 * What a stream carries:
 * - list changes (`publish`, from routing/listens/listen-feed.ts) go to every open stream whose filter
 *   asked for that list (`toolsListChanged`, `promptsListChanged`, `resourcesListChanged`), only
 *   where the endpoint declares `listChanged` for it;
 * - resource updates go only to the stream whose listen holds that subscription
 *   (routing/listens/resource-listens.ts): a listen naming `resourceSubscriptions` (where the endpoint
 *   declares `resources.subscribe`) is subscribed upstream first, and the acknowledgement names
 *   only the URIs that were honoured (the server acknowledges the subset it accepts).
 *
 * Bounds: at most `maxListens` listens per endpoint (default 1,024), of which one authenticated
 * principal may hold `maxListensPerPrincipal` (default half); past either the listen is refused
 * SUBSCRIPTION_LIMIT (503, -32001) with `data.limit` saying whose bound it met, and the operator
 * is told at warn (at most one line per kind per 10 s: refusal-log.ts). A listen holds its place
 * from its admission — while its resource subscriptions are still being made upstream, too, so
 * listens arriving together cannot overshoot — until its stream ends. A stream whose client
 * reads nothing while more than 32 MiB waits is cut.
 *
 * A listen naming `taskIds` (the tasks extension's status notifications) from a client that did
 * not declare the extension is refused -32021, as the extension requires; from one that did, it
 * is acknowledged without `taskIds` — no status is pushed (routing/tasks/README.md).
 */
import { SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY, type Implementation, type JSONRPCRequest, type ServerCapabilities } from '@modelcontextprotocol/server';
import { errorResponse, GatewayError, protocolRefusal, protocolRefusalResponse } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { RefusalLog } from '../observability/refusal-log.js';
import { PrincipalShare } from '../policy/principal-share.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { ListenGrant } from '../routing/listens/listen-grant.js';
import { subscriptionLimit } from '../routing/listens/listen-limits.js';
import type { ResourceListens } from '../routing/listens/resource-listens.js';
import { declaresTasksExtension, missingTasksExtension } from '../routing/tasks/task-capabilities.js';
import { MAX_UNREAD_BYTES, SSE_HEADERS, SseWriter } from './sse-writer.js';

/** Who is listening: the request's principal and workspace, and its view of the catalogue. */
export interface ListenCaller {
  principal: string | undefined;
  workspace: string | undefined;
  catalogue(): Catalogue;
}

/** What the endpoint declares to the caller (the filter is honoured within it) and who it is. */
export interface ListenFace {
  readonly capabilities: ServerCapabilities;
  readonly serverInfo: Implementation;
}

/** Open listen streams per endpoint, by default (the SDK's own bound, kept). */
export const DEFAULT_MAX_LISTENS = 1024;
export const DEFAULT_MAX_LISTENS_PER_PRINCIPAL = DEFAULT_MAX_LISTENS / 2;

/** The lists whose changes a listen may ask for. */
export type ListName = 'tools' | 'prompts' | 'resources';

/** What a listen asked for, as honoured (MCP 2026-07-28 `SubscriptionFilter`). */
interface Filter {
  toolsListChanged?: true;
  promptsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
}

const FILTER_KEY: Record<ListName, 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged'> = {
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
  resources: 'resourcesListChanged',
};

type Body = Record<string, unknown>;

function isPlainObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The filter a listen request asked for, as the revision's schema reads it: `notifications` an
 * object whose list flags are booleans and whose `resourceSubscriptions` is an array of strings
 * (other members are not the filter's and are ignored); undefined when it is not one. Pure.
 */
export function requestedFilter(params: unknown): Body | undefined {
  const filter = isPlainObject(params) ? params.notifications : undefined;
  if (!isPlainObject(filter)) return undefined;
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged']) {
    if (filter[key] !== undefined && typeof filter[key] !== 'boolean') return undefined;
  }
  const uris = filter.resourceSubscriptions;
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((uri) => typeof uri === 'string'))) return undefined;
  return filter;
}

/** What of `requested` the endpoint can deliver, given what it declares. Pure. */
export function honoured(requested: Body, capabilities: ServerCapabilities): Filter {
  const filter: Filter = {};
  if (requested.toolsListChanged === true && capabilities.tools?.listChanged === true) filter.toolsListChanged = true;
  if (requested.promptsListChanged === true && capabilities.prompts?.listChanged === true) filter.promptsListChanged = true;
  if (requested.resourcesListChanged === true && capabilities.resources?.listChanged === true) filter.resourcesListChanged = true;
  const uris = requested.resourceSubscriptions as string[] | undefined;
  if (uris !== undefined && uris.length > 0 && capabilities.resources?.subscribe === true) filter.resourceSubscriptions = [...uris];
  return filter;
}

/** One open listen. */
interface Stream {
  readonly filter: Filter;
  deliver(method: string, params: Body | undefined): void;
  /** Ends the stream: `graceful` writes the closing result first (the server ended it). */
  end(graceful: boolean): void;
}

export interface ListenStreamsOptions {
  /** Listens one endpoint holds at most (default {@link DEFAULT_MAX_LISTENS}). */
  maxListens?: number;
  /** Listens one authenticated principal holds at most (default half of `maxListens`). */
  maxListensPerPrincipal?: number;
  /** Where refusals past a bound are reported to the operator. */
  logger: Logger;
}

export class ListenStreams {
  private readonly open = new Set<Stream>();
  private readonly resources: ResourceListens;
  private readonly maxListens: number;
  /** Listens admitted and not yet ended: open streams and those still subscribing upstream. */
  private admitted = 0;
  /** Listens each authenticated principal holds (admitted, stream not yet ended). */
  private readonly perPrincipal: PrincipalShare;
  private readonly refusals: RefusalLog;
  private closed = false;

  constructor(resources: ResourceListens, options: ListenStreamsOptions) {
    this.resources = resources;
    this.maxListens = options.maxListens ?? DEFAULT_MAX_LISTENS;
    this.perPrincipal = new PrincipalShare(options.maxListensPerPrincipal ?? Math.floor(this.maxListens / 2));
    this.refusals = new RefusalLog(options.logger);
  }

  /** Open listen streams right now. */
  get streams(): number {
    return this.open.size;
  }

  /** `list` changed: told to every open stream that asked for it. */
  publish(list: ListName): void {
    const key = FILTER_KEY[list];
    for (const stream of [...this.open]) if (stream.filter[key] === true) stream.deliver(`notifications/${list}/list_changed`, undefined);
  }

  /**
   * Serves one listen request (already through the 2026 validation ladder) of `caller`, as
   * `face` declares the endpoint; the stream ends when `signal` aborts (the client hung up).
   */
  async serve(message: JSONRPCRequest, caller: ListenCaller, face: ListenFace, signal: AbortSignal): Promise<Response> {
    const id = message.id;
    const params = message.params as Body | undefined;
    if (isPlainObject(params?.notifications) && params.notifications.taskIds !== undefined && !declaresTasksExtension(params._meta as Body | undefined)) {
      // 2026-07-28 tasks extension, "Task Status Notifications": a MUST for a non-declaring client.
      return errorResponse(missingTasksExtension(), { id });
    }
    const requested = requestedFilter(params);
    if (requested === undefined) return protocolRefusalResponse(protocolRefusal.invalidListenFilter(), id);
    if (this.admitted >= this.maxListens) return this.refuse(subscriptionLimit('gateway', 'listens', this.maxListens), id, caller.principal);
    const share = this.perPrincipal.take(caller.principal);
    if (share === undefined) return this.refuse(subscriptionLimit('principal', 'listens', this.perPrincipal.max), id, caller.principal);
    this.admitted += 1;
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      this.admitted -= 1;
      share();
    };
    const filter = honoured(requested, face.capabilities);
    let grant: ListenGrant | undefined;
    if (filter.resourceSubscriptions !== undefined) {
      try {
        grant = await this.resources.open({ principal: caller.principal, workspace: caller.workspace }, caller.catalogue(), filter.resourceSubscriptions);
      } catch (error) {
        free();
        return this.refuse(error, id, caller.principal);
      }
      if (grant.uris.length > 0) filter.resourceSubscriptions = [...grant.uris];
      else delete filter.resourceSubscriptions;
    }
    return this.stream(id, filter, face.serverInfo, signal, () => {
      grant?.release();
      free();
    }, grant);
  }

  /** Ends every stream with the closing result (the endpoint is closing); a listen admitted before and opening after ends at once. */
  close(): void {
    this.closed = true;
    for (const stream of [...this.open]) stream.end(true);
  }

  /**
   * The answer refusing listen `id` with `error`; a bound it met (SUBSCRIPTION_LIMIT) is told to
   * the operator too, since a client can keep meeting it at will (one line per kind and interval).
   */
  private refuse(error: unknown, id: string | number, principal: string | undefined): Response {
    if (error instanceof GatewayError && error.code === 'SUBSCRIPTION_LIMIT') {
      const limit = (error.data as { limit?: { scope?: string; counts?: string; max?: number } } | undefined)?.limit;
      const scope = limit?.scope === 'principal' ? 'principal' : 'gateway';
      const counts = limit?.counts === 'resourceSubscriptions' ? 'resourceSubscriptions' : 'listens';
      this.refusals.warn(
        `SUBSCRIPTION_LIMIT:${scope}:${counts}`,
        { ...(scope === 'principal' ? { principal } : {}), counts, limit: limit?.max },
        scope === 'principal'
          ? 'listen refused: a principal holds its share of 2026 listens or resource subscriptions; its client may be opening listens it never closes'
          : 'listen refused: the endpoint holds every 2026 listen or resource subscription it allows; clients are refused SUBSCRIPTION_LIMIT until listens end',
      );
    }
    return errorResponse(error, { id });
  }

  private stream(id: string | number, filter: Filter, serverInfo: Implementation, signal: AbortSignal, release: () => void, grant: ListenGrant | undefined): Response {
    let ended = false;
    const writer = new SseWriter(() => stream.end(false));
    const stamped = (params: Body | undefined): Body => ({ ...params, _meta: { ...(params?._meta as Body | undefined), [SUBSCRIPTION_ID_META_KEY]: id } });
    const write = (message: Body) => {
      writer.event(message as never, undefined);
      if (writer.backlogBytes > MAX_UNREAD_BYTES) writer.abort();
    };
    const onAbort = () => stream.end(false);
    const stream: Stream = {
      filter,
      deliver: (method, params) => {
        if (!ended) write({ jsonrpc: '2.0', method, params: stamped(params) });
      },
      end: (graceful) => {
        if (ended) return;
        ended = true;
        this.open.delete(stream);
        signal.removeEventListener('abort', onAbort);
        release();
        if (graceful) {
          write({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: id, [SERVER_INFO_META_KEY]: serverInfo } } });
        }
        writer.close();
      },
    };
    write({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: stamped({ notifications: filter }) });
    if (Object.keys(filter).length === 0 || this.closed) {
      // Nothing to deliver, or the endpoint closed meanwhile: the listen ends at once, as the server's own decision.
      stream.end(true);
    } else if (signal.aborted) {
      stream.end(false);
    } else {
      this.open.add(stream);
      signal.addEventListener('abort', onAbort, { once: true });
      writer.startKeepAlive();
      const uris = filter.resourceSubscriptions;
      grant?.attach((uri, params) => {
        if (uris?.includes(uri) === true) stream.deliver('notifications/resources/updated', { ...params, uri });
      });
    }
    return new Response(writer.body, { status: 200, headers: SSE_HEADERS });
  }
}
