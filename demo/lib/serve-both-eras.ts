/**
 * Serves one MCP server factory over Streamable HTTP to clients of BOTH protocol eras on one path:
 *
 * - 2025-era clients (initialize handshake, `Mcp-Session-Id`, SSE, resumability) get a sessionful
 *   transport per session (see `legacy-sessions.ts`);
 * - 2026-07-28 clients (per-request `_meta` envelope, `server/discover`, `subscriptions/listen`)
 *   go to `createMcpHandler(factory, { legacy: 'reject' })`.
 *
 * Routing uses the SDK's own `isLegacyRequest()` classification, so it can never disagree with
 * the modern handler. Binds 127.0.0.1 only and validates Host and Origin before anything else
 * (DNS-rebinding protection for a local HTTP server, GHSA-w48q-cv73-mx4w).
 */
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  readRequestBody,
  type EventStore,
  type McpServer,
  type ServerNotifier,
} from '@modelcontextprotocol/server';
import { createLegacySessions, jsonRpcError } from './legacy-sessions.js';

/** What a factory learns about the instance it is building. */
export interface ServeContext {
  /** The client's protocol era: '2025', one session; '2026', one 2026-07-28 request. */
  era: '2025' | '2026';
  /** Publishes list-changed / resource-updated events to open 2026-era `subscriptions/listen` streams. */
  notify: ServerNotifier;
}

/** Builds a fresh server instance; called once per 2025-era session and once per 2026-era request. */
export type ServeFactory = (ctx: ServeContext) => McpServer | Promise<McpServer>;

export interface ServeBothErasOptions {
  factory: ServeFactory;
  /** TCP port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Endpoint path (default `/mcp`). */
  path?: string;
  /** Cap on live 2025-era sessions (default 64); the least recently used one is closed to admit a new one. */
  maxSessions?: number;
  /** Per-session event store factory for 2025-era resumability (none by default). */
  eventStore?: () => EventStore;
  /** `retry:` hint in ms written in SSE priming events (only with an event store). */
  retryInterval?: number;
  /** Largest POST body read, in bytes (default 4 MiB). */
  maxRequestBodySize?: number;
  /** Out-of-band error reporting (never alters a response). */
  onerror?: (error: Error) => void;
}

export interface BothErasServer {
  /** `http://127.0.0.1:PORT/PATH` */
  readonly url: string;
  readonly port: number;
  /** Same notifier the factories receive. */
  readonly notify: ServerNotifier;
  /** Closes every session, the modern handler and the listening socket (open streams included). */
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

/** Starts the server; resolves once it is listening on 127.0.0.1. */
export async function serveBothEras(options: ServeBothErasOptions): Promise<BothErasServer> {
  const path = options.path ?? '/mcp';
  const maxBody = options.maxRequestBodySize ?? DEFAULT_MAX_BODY;
  const allowedHosts = localhostAllowedHostnames();
  const allowedOrigins = localhostAllowedOrigins();

  const modern = createMcpHandler((ctx) => options.factory({ era: ctx.era === 'legacy' ? '2025' : '2026', notify: modern.notify }), {
    legacy: 'reject',
    maxRequestBodySize: maxBody,
    onerror: options.onerror,
  });
  const legacy = createLegacySessions({
    factory: () => options.factory({ era: '2025', notify: modern.notify }),
    maxSessions: options.maxSessions ?? 64,
    eventStore: options.eventStore,
    retryInterval: options.retryInterval,
    onerror: options.onerror,
  });

  async function serveMcp(request: Request): Promise<Response> {
    const rejected =
      hostHeaderValidationResponse(request, allowedHosts) ?? originValidationResponse(request, allowedOrigins);
    if (rejected !== undefined) return rejected;
    if (request.method !== 'POST') return legacy.handle(request, undefined);

    const body = await readRequestBody(request.clone(), maxBody);
    if (body.tooLarge) return jsonRpcError(413, -32600, 'Request body too large');
    const parsedBody = parseJson(body.text);
    const isLegacy =
      parsedBody === undefined ? true : await isLegacyRequest(request, parsedBody, { maxRequestBodySize: maxBody });
    return isLegacy ? legacy.handle(request, parsedBody) : modern.fetch(request, { parsedBody });
  }

  const app = new Hono();
  app.all(path, (c) => serveMcp(c.req.raw));

  const { server, port } = await listen(app.fetch, options.port ?? 0);
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    notify: modern.notify,
    async close() {
      await legacy.closeAll();
      await modern.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  port: number,
): Promise<{ server: HttpServer; port: number }> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, hostname: '127.0.0.1', port }, (info: AddressInfo) => {
      resolve({ server: server as HttpServer, port: info.port });
    });
    server.once('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
