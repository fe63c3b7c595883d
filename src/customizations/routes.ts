/**
 * Where hosts read the customisation list, under each MCP path (`<path>/customizations`), behind
 * the same Host/Origin guards and authentication as the MCP endpoint itself (the app mounts these
 * after them):
 *
 * - `GET <path>/customizations` → `{ "items": Customization[] }`, plus, for a caller that sends
 *   its session's `Mcp-Session-Id`, that session's client plugin (the servers its client brought);
 * - `GET <path>/customizations?watch=1` → `text/event-stream`: the current list at once, then the
 *   whole list again (`event: customizationsChanged`, `data: {"items": […]}`) whenever anything
 *   in it changes. Pull-driven: a watcher that does not read holds one pending list, never a
 *   backlog; at most {@link MAX_WATCHERS} watch at once.
 *
 * Other methods answer 405 through the error taxonomy. Enablement toggles
 * (`POST <path>/customizations/toggle`) are not built yet and answer 501 saying so, never a
 * pretended success.
 */
import type { Context, Hono } from 'hono';
import { errorResponse, GatewayError } from '../errors.js';
import type { CustomizationList, ListSnapshot } from './customization-list.js';
import type { PluginCustomization } from './types.js';

/** Concurrent watch streams per gateway; each holds one socket and one waiter. */
export const MAX_WATCHERS = 256;
/** A comment line keeps idle proxies from cutting a quiet stream. */
const KEEPALIVE_MS = 15_000;

export interface CustomizationRoutesOptions {
  /** The MCP endpoint's path ('' for `/`). */
  readonly base: string;
  readonly list: CustomizationList;
  /** The client plugin of the caller's session (the servers its client brought), if any (session-plugin.ts). */
  readonly sessionPlugin?: (c: Context) => PluginCustomization | undefined;
}

const encoder = new TextEncoder();

function event(snapshot: ListSnapshot): Uint8Array {
  return encoder.encode(`event: customizationsChanged\ndata: ${snapshot.json}\n\n`);
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

  const watch = (c: Context): Response => {
    if (watchers >= MAX_WATCHERS) {
      return errorResponse(new GatewayError('WATCH_LIMIT', `too many customisation watchers (at most ${MAX_WATCHERS}); retry later`, { retryAfterMs: 5_000 }));
    }
    watchers++;
    const hangUp = new AbortController();
    c.req.raw.signal.addEventListener('abort', () => hangUp.abort(), { once: true });
    let sent = -1;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      watchers--;
      hangUp.abort();
    };
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (sent < 0) {
            const first = list.snapshot();
            sent = first.version;
            controller.enqueue(event(first));
            return;
          }
          const next = await nextOrKeepalive(list, sent, hangUp.signal, KEEPALIVE_MS);
          if (next === 'closed') {
            release();
            controller.close();
          } else if (next === undefined) {
            controller.enqueue(encoder.encode(': keepalive\n\n'));
          } else {
            sent = next.version;
            controller.enqueue(event(next));
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
    const mode = c.req.query('watch');
    if (mode === '1' || mode === 'true') return watch(c);
    // The caller's own session adds its client plugin (servers its client brought); nobody else's.
    const own = options.sessionPlugin?.(c);
    const json = own === undefined ? list.snapshot().json : JSON.stringify({ items: [...list.snapshot().items, own] });
    return new Response(json, { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
  });
  app.all(path, () => errorResponse(new GatewayError('METHOD_NOT_ALLOWED', 'the customisation list is read with GET')));
  app.all(`${path}/toggle`, () =>
    errorResponse(new GatewayError('NOT_IMPLEMENTED', 'enablement toggles are not available in this version of the gateway; nothing was changed')),
  );
}
