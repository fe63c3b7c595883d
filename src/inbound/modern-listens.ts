/**
 * 2026-07-28 `subscriptions/listen` streams, served by the SDK's `createMcpHandler` over this bus.
 * The SDK owns the wire (the acknowledgement first, the filter, `subscriptionId` stamping,
 * keep-alive, teardown); the bus sources its events:
 * - list changes (`publish`, from listen-feed.ts) go to every open stream, and the SDK passes on
 *   those the stream asked for;
 * - resource updates go only to the stream whose listen holds that subscription
 *   (routing/resource-listens.ts): each listen naming `resourceSubscriptions` is subscribed
 *   upstream before the SDK serves it, and the body the SDK sees names only the URIs that were
 *   honoured, so its acknowledgement says exactly what will be delivered (MCP 2026-07-28,
 *   basic/patterns/subscriptions: the server acknowledges the subset it accepts).
 *
 * How a stream finds its listen: the SDK registers a stream's listener (`subscribe`) synchronously
 * while it serves that request, inside `fetch`; `serve` runs `fetch` in an AsyncLocalStorage
 * context holding the listen's grant, and the first `subscribe` in that context takes it. The
 * stream's teardown (client hang-up, server shutdown) calls the unsubscribe, which releases the
 * grant; a listen the SDK refused or answered without a stream never subscribed, and its grant is
 * released when `fetch` returns.
 *
 * Listen streams per principal: the SDK holds at most 1,024 open streams per endpoint; one
 * authenticated principal may hold `maxListensPerPrincipal` of them (default half), so it cannot
 * take every stream (SUBSCRIPTION_LIMIT, `data.limit.scope: "principal"`). A listen holds its place
 * from admission until its stream's teardown, or until `fetch` returns when no stream opened.
 *
 * A listen naming `taskIds` (the tasks extension's status notifications) from a client that did
 * not declare the extension is refused -32021, as the extension requires; from one that did, the
 * SDK acknowledges it without `taskIds` — no status is pushed (routing/tasks/README.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { errorResponse } from '../errors.js';
import { PrincipalShare } from '../policy/principal-share.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { ListenGrant } from '../routing/listen-grant.js';
import { subscriptionLimit } from '../routing/listen-limits.js';
import type { ResourceListens } from '../routing/resource-listens.js';
import { declaresTasksExtension, missingTasksExtension } from '../routing/tasks/task-capabilities.js';

/** Who is listening: the request's principal and workspace, and its view of the catalogue. */
export interface ListenCaller {
  principal: string | undefined;
  workspace: string | undefined;
  catalogue(): Catalogue;
}

/** Open listen streams per endpoint the SDK's handler allows (its `DEFAULT_MAX_SUBSCRIPTIONS`). */
export const SDK_MAX_LISTENS = 1024;
export const DEFAULT_MAX_LISTENS_PER_PRINCIPAL = SDK_MAX_LISTENS / 2;

/** What one listen holds until its stream ends: its resource grant, if any, and its place in the principal's share. */
interface Claim {
  grant: ListenGrant | undefined;
  /** Gives the listen's place back; idempotent. */
  free: () => void;
  taken: boolean;
}

type Body = Record<string, unknown>;

/** The `resourceSubscriptions` of a well-formed listen request; undefined for anything else (the SDK judges it). */
export function listenedUris(body: unknown): readonly string[] | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as Body;
  if (message.method !== 'subscriptions/listen' || message.id === undefined) return undefined;
  const notifications = (message.params as Body | undefined)?.notifications as Body | undefined;
  const uris = notifications?.resourceSubscriptions;
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((uri) => typeof uri === 'string')) return undefined;
  return uris as string[];
}

/** True for a `subscriptions/listen` request (a method and an id). */
function isListen(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as Body).method === 'subscriptions/listen' && (body as Body).id !== undefined;
}

/** True for a listen request whose filter names `taskIds` (the tasks extension's status notifications). */
function namesTaskIds(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || (body as Body).method !== 'subscriptions/listen') return false;
  const notifications = ((body as Body).params as Body | undefined)?.notifications as Body | undefined;
  return notifications?.taskIds !== undefined;
}

/** `body` with its `resourceSubscriptions` narrowed to `uris`. */
function narrowed(body: unknown, uris: readonly string[]): Body {
  const message = body as Body;
  const params = message.params as Body;
  const notifications = params.notifications as Body;
  return { ...message, params: { ...params, notifications: { ...notifications, resourceSubscriptions: [...uris] } } };
}

export class ModernListenBus implements ServerEventBus {
  private readonly listeners = new Set<(event: ServerEvent) => void>();
  private readonly claims = new AsyncLocalStorage<Claim>();
  private readonly resources: ResourceListens;
  /** Listens each authenticated principal holds (admitted, stream not yet torn down). */
  private readonly perPrincipal: PrincipalShare;

  constructor(resources: ResourceListens, options: { maxListensPerPrincipal?: number } = {}) {
    this.resources = resources;
    this.perPrincipal = new PrincipalShare(options.maxListensPerPrincipal ?? DEFAULT_MAX_LISTENS_PER_PRINCIPAL);
  }

  /** Open listen streams right now. */
  get streams(): number {
    return this.listeners.size;
  }

  /** A list change, to every open stream (resource updates travel by grant only, never here). */
  publish(event: ServerEvent): void {
    if (event.kind === 'resource_updated') return;
    for (const listener of [...this.listeners]) listener(event);
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    this.listeners.add(listener);
    const claim = this.claims.getStore();
    const grant = claim !== undefined && !claim.taken ? claim.grant : undefined;
    const free = claim !== undefined && !claim.taken ? claim.free : undefined;
    if (claim !== undefined) claim.taken = true;
    grant?.attach((uri, params) => listener({ kind: 'resource_updated', uri, params }));
    let live = true;
    return () => {
      if (!live) return;
      live = false;
      this.listeners.delete(listener);
      grant?.release();
      free?.();
    };
  }

  /**
   * Serves one 2026 request through `fetch` (the SDK handler, given the body to use). A listen
   * naming resources is first subscribed upstream for `key`, owners found in `catalogue`; a
   * refusal (too many URIs, the gateway's subscription budget) is answered here.
   */
  async serve(body: unknown, caller: ListenCaller, fetch: (body: unknown) => Promise<Response>): Promise<Response> {
    if (namesTaskIds(body) && !declaresTasksExtension(((body as Body).params as Body | undefined)?._meta as Body | undefined)) {
      // 2026-07-28 tasks extension, "Task Status Notifications": a MUST for a non-declaring client.
      return errorResponse(missingTasksExtension(), { id: (body as Body).id as string | number });
    }
    if (!isListen(body)) return fetch(body);
    const id = (body as Body).id as string | number;
    const free = this.perPrincipal.take(caller.principal);
    if (free === undefined) return errorResponse(subscriptionLimit('principal', 'listens', this.perPrincipal.max), { id });
    const uris = listenedUris(body);
    let grant: ListenGrant | undefined;
    try {
      if (uris !== undefined) grant = await this.resources.open({ principal: caller.principal, workspace: caller.workspace }, caller.catalogue(), uris);
    } catch (error) {
      free();
      return errorResponse(error, { id });
    }
    const claim: Claim = { grant, free, taken: false };
    try {
      return await this.claims.run(claim, () => fetch(grant === undefined ? body : narrowed(body, grant.uris)));
    } finally {
      if (!claim.taken) {
        grant?.release();
        free();
      }
    }
  }
}
