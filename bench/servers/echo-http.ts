/**
 * Echo upstream over Streamable HTTP on 127.0.0.1 only, answering with JSON bodies (no SSE):
 *
 * - 2025-era clients get a session (`Mcp-Session-Id`) served by one
 *   `WebStandardStreamableHTTPServerTransport` with `enableJsonResponse` per session, in a map
 *   capped by `--max-sessions` (least recently used evicted);
 * - 2026-era requests go to `createMcpHandler(..., { legacy: 'reject', responseMode: 'json' })`.
 *
 * Host is validated (DNS-rebinding defence for a local HTTP server, GHSA-w48q-cv73-mx4w).
 *
 *   node dist/bench/servers/echo-http.js [--port N] [--max-sessions N] [--sse]
 *
 * `--sse` answers 2025-era POSTs with SSE streams instead (the transport's default), to measure
 * what streaming a single response costs compared with a JSON body.
 *   prints `ECHO_READY http://127.0.0.1:PORT/mcp`
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isInitializeRequest,
  isLegacyRequest,
  localhostAllowedHostnames,
  WebStandardStreamableHTTPServerTransport,
  type McpServer,
} from '@modelcontextprotocol/server';
import { createEchoServer } from './echo-tool.js';

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
}

const MAX_BODY = 1024 * 1024;

function jsonError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function readOptions(): { port: number; maxSessions: number; sse: boolean } {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      port: { type: 'string', default: '0' },
      'max-sessions': { type: 'string', default: '4096' },
      sse: { type: 'boolean', default: false },
    },
  });
  const port = Number(values.port);
  const maxSessions = Number(values['max-sessions']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError('--port must be 0-65535');
  if (!Number.isInteger(maxSessions) || maxSessions < 1) throw new TypeError('--max-sessions must be a positive integer');
  return { port, maxSessions, sse: values.sse === true };
}

function createEchoHandler(maxSessions: number, sse: boolean): { fetch(request: Request): Promise<Response>; close(): Promise<void> } {
  const sessions = new Map<string, Session>();
  const allowedHosts = localhostAllowedHostnames();
  const modern = createMcpHandler(() => createEchoServer(), { legacy: 'reject', responseMode: 'json' });

  const closeSession = (id: string): void => {
    const session = sessions.get(id);
    if (session === undefined) return;
    sessions.delete(id);
    void session.server.close().catch(() => undefined);
  };

  const open = async (request: Request, parsedBody: unknown): Promise<Response> => {
    const server = createEchoServer();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: !sse,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
        while (sessions.size > maxSessions) {
          const oldest = sessions.keys().next();
          if (oldest.done) break;
          closeSession(oldest.value);
        }
      },
      onsessionclosed: (id) => closeSession(id),
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody });
    if (transport.sessionId === undefined) await server.close().catch(() => undefined);
    return response;
  };

  const legacy = (request: Request, parsedBody: unknown): Promise<Response> | Response => {
    const id = request.headers.get('mcp-session-id');
    if (id === null) {
      if (request.method === 'POST' && isInitializeRequest(parsedBody)) return open(request, parsedBody);
      return jsonError(400, -32000, 'Bad Request: no valid session id provided');
    }
    const session = sessions.get(id);
    if (session === undefined) return jsonError(404, -32001, 'Session not found');
    return session.transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
  };

  return {
    async fetch(request) {
      const rejected = hostHeaderValidationResponse(request, allowedHosts);
      if (rejected !== undefined) return rejected;
      if (request.method !== 'POST') return legacy(request, undefined);
      const text = await request.text();
      if (text.length > MAX_BODY) return jsonError(413, -32600, 'Request body too large');
      let parsedBody: unknown;
      try {
        parsedBody = JSON.parse(text) as unknown;
      } catch {
        return jsonError(400, -32700, 'Parse error');
      }
      if (await isLegacyRequest(request, parsedBody)) return legacy(request, parsedBody);
      return modern.fetch(request, { parsedBody });
    },
    async close() {
      await Promise.all([...sessions.keys()].map((id) => closeSession(id)));
      await modern.close();
    },
  };
}

async function main(): Promise<void> {
  const { port, maxSessions, sse } = readOptions();
  const handler = createEchoHandler(maxSessions, sse);
  const http = await new Promise<HttpServer>((resolve, reject) => {
    const server = serve({ fetch: (request) => handler.fetch(request), hostname: '127.0.0.1', port }, () =>
      resolve(server as HttpServer),
    ) as HttpServer;
    server.once('error', reject);
  });
  const address = http.address() as AddressInfo;
  process.stdout.write(`ECHO_READY http://127.0.0.1:${address.port}/mcp\n`);
  const shutdown = (): void => {
    void handler.close().finally(() => {
      http.closeAllConnections();
      http.close(() => process.exit(0));
    });
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`[echo-http] ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
