/**
 * Where hosts read the customisation list, under each MCP path (`<path>/customizations`), behind
 * the same Host/Origin guards and authentication as the MCP endpoint itself (the app mounts these
 * after them):
 *
 * - `GET <path>/customizations` → `{ "items": Customization[] }`, resolved for the caller
 *   (caller-view.ts: its session with `Mcp-Session-Id`, else `?workspace=`, else global only),
 *   plus that session's client plugin (the servers its client brought), for that session only;
 * - `GET <path>/customizations?watch=1` → `text/event-stream`: the caller's current list at
 *   once, then its whole list again (`event: customizationsChanged`, `data: {"items": […]}`)
 *   whenever anything in it changes. Pull-driven: a watcher that does not read holds one pending
 *   list, never a backlog; at most {@link MAX_WATCHERS} watch at once, of which one authenticated
 *   principal holds at most {@link MAX_WATCHERS_PER_PRINCIPAL} (as 2026 listens have a share), so
 *   one principal's idle streams never take every other principal's place.
 * - `POST <path>/customizations/toggle` → toggle-route.ts.
 * - `POST <path>/customizations/authenticate` → authenticate-route.ts (a session's own token for
 *   a `perUser` server), when the gateway holds such tokens.
 *
 * All of them answer only what the caller's access profile shows (access-filter.ts): a server the
 * policy's access rules hide from it is not named, nor is a plugin of nothing but such servers, and
 * toggling or authenticating for one is answered as for an id that does not exist.
 *
 * Other methods answer 405 through the error taxonomy.
 */
import type { Context, Hono } from 'hono';
import { errorResponse, GatewayError } from '../errors.js';
import type { AccessProfile } from '../policy/access-policy.js';
import { PrincipalShare } from '../policy/principal-share.js';
import { customizationsFor, listJsonFor } from './access-filter.js';
import { callerView, type CallerView } from './caller-view.js';
import { listResponse } from './list-response.js';
import type { CustomizationList, ListSnapshot } from './customization-list.js';
import { mountToggle, type ToggleRouteOptions } from './toggle-route.js';
import { mountAuthenticate } from './authenticate-route.js';
import type { UserTokens } from '../upstream/credentials/user-tokens.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import type { PluginCustomization } from './types.js';

/** Concurrent watch streams per gateway; each holds one socket and one waiter. */
export const MAX_WATCHERS = 256;
/** Of those, the most one authenticated principal holds (a host opens one per window or so). */
export const MAX_WATCHERS_PER_PRINCIPAL = MAX_WATCHERS / 4;
/** A comment line keeps idle proxies from cutting a quiet stream. */
const KEEPALIVE_MS = 15_000;

export interface CustomizationRoutesOptions extends Omit<ToggleRouteOptions, 'path'> {
  /** The MCP endpoint's path ('' for `/`). */
  readonly base: string;
  readonly list: CustomizationList;
  /** Who authentication says is calling (undefined when auth is off). */
  principalOf(c: Context): string | undefined;
  /** The client plugin of the caller's session (the servers its client brought), if any (session-plugin.ts). */
  readonly sessionPlugin?: (c: Context) => PluginCustomization | undefined;
  /** Sessions' tokens for per-user servers, and the registry that says which servers take them. */
  readonly userTokens?: { readonly store: UserTokens; readonly registry: UpstreamRegistry };
}

const encoder = new TextEncoder();

function event(json: string): Uint8Array {
  return encoder.encode(`event: customizationsChanged\ndata: ${json}\n\n`);
}

/** Waits up to `ms` for the next version; `undefined` means "send a keep-alive". */
async function nextOrKeepalive(list: CustomizationList, version: number, signal: AbortSignal, ms: number): Promise<ListSnapshot | 'closed' | undefined> {
  const tick = new AbortController();
  const timer = setTimeout(() => tick.abort(), ms);
  const both = AbortSignal.any([signal, tick.signal]);
  try {
    const next = await list.after(version, both);
    if (next !== undefined) return next;
    return list.closed || signal.aborted ? 'closed' : undefined;
  } finally {
    clearTimeout(timer);
  }
}

export function mountCustomizations(app: Hono, options: CustomizationRoutesOptions): void {
  const { list } = options;
  const path = `${options.base}/customizations`;
  let watchers = 0;
  const perPrincipal = new PrincipalShare(MAX_WATCHERS_PER_PRINCIPAL);

  const watch = (c: Context, caller: CallerView, access: AccessProfile | undefined): Response => {
    if (watchers >= MAX_WATCHERS) {
      return errorResponse(new GatewayError('WATCH_LIMIT', `too many customisation watchers (at most ${MAX_WATCHERS}); retry later`, { retryAfterMs: 5_000 }));
    }
    const principal = options.principalOf(c);
    const freeShare = perPrincipal.take(principal);
    if (freeShare === undefined) {
      return errorResponse(
        new GatewayError('WATCH_LIMIT', `too many customisation watchers for this principal (at most ${MAX_WATCHERS_PER_PRINCIPAL}); close one or retry later`, { retryAfterMs: 5_000 }),
      );
    }
    watchers++;
    const hangUp = new AbortController();
    c.req.raw.signal.addEventListener('abort', () => hangUp.abort(), { once: true });
    let sent = -1;
    let sentJson = '';
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      watchers--;
      freeShare();
      hangUp.abort();
    };
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (sent < 0) {
            const first = list.viewFor(caller.viewer());
            sent = first.version;
            sentJson = listJsonFor(first, access);
            controller.enqueue(event(sentJson));
            return;
          }
          for (;;) {
            const next = await nextOrKeepalive(list, sent, hangUp.signal, KEEPALIVE_MS);
            if (next === 'closed') {
              release();
              controller.close();
              return;
            }
            if (next === undefined) {
              controller.enqueue(encoder.encode(': keepalive\n\n'));
              return;
            }
            sent = next.version;
            // Another session's toggle moves the version but not this caller's list: nothing to send.
            const mine = listJsonFor(list.viewFor(caller.viewer()), access);
            if (mine === sentJson) continue;
            sentJson = mine;
            controller.enqueue(event(mine));
            return;
          }
        },
        cancel() {
          release();
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
    });
  };

  app.get(path, (c) => {
    const caller = callerView(c.req, options.principalOf(c), list.enablement);
    if (caller instanceof GatewayError) return errorResponse(caller);
    const access = options.accessOf?.(c);
    const mode = c.req.query('watch');
    if (mode === '1' || mode === 'true') return watch(c, caller, access);
    // The caller's own session adds its client plugin (servers its client brought); nobody else's.
    const own = options.sessionPlugin?.(c);
    const view = list.viewFor(caller.viewer());
    const json = own === undefined ? listJsonFor(view, access) : JSON.stringify({ items: customizationsFor([...view.items, own], access) });
    return listResponse(json);
  });
  app.all(path, () => errorResponse(new GatewayError('METHOD_NOT_ALLOWED', 'the customisation list is read with GET')));
  mountToggle(app, { ...options, path: `${path}/toggle` });
  const userTokens = options.userTokens;
  if (userTokens !== undefined) {
    mountAuthenticate(app, {
      path: `${path}/authenticate`,
      list,
      registry: userTokens.registry,
      userTokens: userTokens.store,
      principalOf: options.principalOf,
      ...(options.accessOf === undefined ? {} : { accessOf: options.accessOf }),
    });
  }
}
