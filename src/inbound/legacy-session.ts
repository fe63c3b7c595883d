/**
 * One 2025-era client session: the SDK's per-session Streamable HTTP transport (SSE streams,
 * `Mcp-Session-Id`), the gateway `Server` on it, and the session's upstream connections. Closing
 * it closes all three, so a DELETE, an idle expiry or shutdown reaps every child it spawned.
 */
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport, type EventStore, type ServerCapabilities } from '@modelcontextprotocol/server';
import type { Logger } from '../observability/logger.js';
import { SessionScope, type ScopeOptions } from '../routing/scopes.js';
import { createGatewayServer, sessionSink } from './gateway-server.js';

export interface LegacySessionOptions {
  name: string;
  version: string;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
  scope: ScopeOptions;
  logger: Logger;
  /** Plug point for resumability (a separate issue); absent means no replay. */
  eventStore?: EventStore;
  onInitialized(session: LegacySession): void;
  onClosed(id: string): void;
}

export class LegacySession {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  private readonly scope: SessionScope;
  private readonly server;
  private closing: Promise<void> | undefined;
  private sessionId: string | undefined;

  constructor(options: LegacySessionOptions) {
    this.server = createGatewayServer(
      {
        name: options.name,
        version: options.version,
        capabilities: options.capabilities,
        instructions: options.instructions,
        era: 'legacy',
        logger: options.logger,
      },
      () => this.scope,
    );
    this.scope = new SessionScope(options.scope, sessionSink(this.server));
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: options.eventStore,
      onsessioninitialized: (id) => {
        this.sessionId = id;
        this.scope.warm();
        options.onInitialized(this);
      },
      onsessionclosed: (id) => options.onClosed(id),
    });
  }

  get id(): string {
    if (this.sessionId === undefined) throw new Error('session not initialised');
    return this.sessionId;
  }

  get initialised(): boolean {
    return this.sessionId !== undefined;
  }

  async start(): Promise<void> {
    await this.server.connect(this.transport);
  }

  handle(request: Request, parsedBody?: unknown): Promise<Response> {
    return this.transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
  }

  /** Idempotent: closes the client transport and every upstream connection of the session. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.server.close().catch(() => undefined);
      await this.scope.close();
    })();
    return this.closing;
  }
}
