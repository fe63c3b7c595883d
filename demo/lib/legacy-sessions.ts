/**
 * Sessionful serving of 2025-era (initialize + Mcp-Session-Id) traffic for the demo and fixture
 * MCP servers: one `WebStandardStreamableHTTPServerTransport` and one server instance per
 * session, held in a bounded map.
 *
 * `createMcpHandler`'s own legacy mode is stateless (no session id, GET/DELETE → 405, no event
 * store), so resumable 2025-era sessions are served here instead (PITFALLS.md, SDK v2).
 */
import { randomUUID } from 'node:crypto';
import {
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
  type EventStore,
  type McpServer,
} from '@modelcontextprotocol/server';

/** Builds the server instance that will serve one new 2025-era session. */
export type LegacySessionFactory = () => McpServer | Promise<McpServer>;

export interface LegacySessionsOptions {
  factory: LegacySessionFactory;
  /** Cap on live sessions; the least recently used one is closed to admit a new one. */
  maxSessions: number;
  /** Per-session event store factory; enables SSE priming events and `Last-Event-ID` resumption. */
  eventStore?: () => EventStore;
  /** `retry:` hint (ms) written in priming events. */
  retryInterval?: number;
  /** Called with every out-of-band transport or server error (reporting only). */
  onerror?: (error: Error) => void;
}

export interface LegacySessions {
  /** Serves one 2025-era HTTP request (POST, GET or DELETE). `parsedBody` is the POST body, if it parsed. */
  handle(request: Request, parsedBody: unknown): Promise<Response>;
  /** Number of live sessions. */
  readonly size: number;
  /** Closes every session and its server instance. */
  closeAll(): Promise<void>;
}

interface SessionEntry {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
}

/**
 * Creates the bounded 2025-era session registry.
 *
 * Unknown session ids answer 404 (the client must re-initialize); a non-initialize request without
 * a session id answers 400. The map is keyed by server-generated random ids only, and its size is
 * capped (STYLE.md "bounded everything").
 */
export function createLegacySessions(options: LegacySessionsOptions): LegacySessions {
  if (!Number.isInteger(options.maxSessions) || options.maxSessions < 1) {
    throw new TypeError('maxSessions must be a positive integer');
  }
  const sessions = new Map<string, SessionEntry>();

  const closeEntry = async (id: string, entry: SessionEntry): Promise<void> => {
    sessions.delete(id);
    await entry.server.close().catch((error: unknown) => options.onerror?.(toError(error)));
  };

  const touch = (id: string, entry: SessionEntry): void => {
    // Re-insert so Map iteration order is least-recently-used first.
    sessions.delete(id);
    sessions.set(id, entry);
  };

  /** Keeps the map within its cap by closing the least recently used sessions. */
  const evictOverflow = (): void => {
    while (sessions.size > options.maxSessions) {
      const oldest = sessions.entries().next();
      if (oldest.done) return;
      void closeEntry(oldest.value[0], oldest.value[1]);
    }
  };

  const openSession = async (request: Request, parsedBody: unknown): Promise<Response> => {
    const server = await options.factory();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: options.eventStore?.(),
      retryInterval: options.retryInterval,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
        evictOverflow(); // the new session is the most recent, so an older one goes
      },
      onsessionclosed: (id) => {
        const entry = sessions.get(id);
        if (entry !== undefined) void closeEntry(id, entry);
      },
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody });
    if (transport.sessionId === undefined) {
      // The handshake failed before a session existed: nothing will ever reach this instance again.
      await server.close().catch((error: unknown) => options.onerror?.(toError(error)));
    }
    return response;
  };

  return {
    async handle(request, parsedBody) {
      const sessionId = request.headers.get('mcp-session-id');
      if (sessionId === null) {
        if (request.method === 'POST' && isInitializeRequest(parsedBody)) return openSession(request, parsedBody);
        return jsonRpcError(400, -32000, 'Bad Request: no valid session id provided');
      }
      const entry = sessions.get(sessionId);
      if (entry === undefined) return jsonRpcError(404, -32001, 'Session not found');
      touch(sessionId, entry);
      return entry.transport.handleRequest(request, { parsedBody });
    },
    get size() {
      return sessions.size;
    },
    async closeAll() {
      await Promise.all([...sessions].map(([id, entry]) => closeEntry(id, entry)));
    },
  };
}

/** A JSON-RPC error body with no id, as the SDK transports answer transport-level refusals. */
export function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
