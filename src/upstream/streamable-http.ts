/**
 * Streamable HTTP connector: the SDK client transport over our own `fetch`, which injects the
 * configured headers (and env-sourced ones, read when each request is built, so a rotated secret
 * is picked up without a restart) and goes through the server's egress dispatcher.
 */
import { StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import type { HttpServerConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';

export interface HttpConnectorDeps {
  /** The egress dispatcher for this server (one per server: the guard is per-server policy). */
  dispatcherFor(server: string, config: HttpServerConfig): Dispatcher;
  /** Reads an environment variable by name (the config layer owns process.env). */
  readEnv(name: string): string | undefined;
}

/** Headers the client may never have us send upstream, whatever the config says. */
const FORBIDDEN_CONFIG_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'mcp-session-id']);

const UNSAFE_HEADER_VALUE = /[\r\n\0]/;

export function createHttpTransport(server: string, config: HttpServerConfig, deps: HttpConnectorDeps, logger: Logger): Transport {
  const dispatcher = deps.dispatcherFor(server, config);
  const warnedMissing = new Set<string>();

  const guardedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(config.headers)) {
      if (!FORBIDDEN_CONFIG_HEADERS.has(name.toLowerCase())) headers.set(name, value);
    }
    for (const [name, variable] of Object.entries(config.envHeaders)) {
      const value = deps.readEnv(variable);
      if (value === undefined) {
        if (!warnedMissing.has(variable)) {
          warnedMissing.add(variable);
          logger.warn({ server, variable }, 'environment variable for an upstream header is not set; header skipped');
        }
        continue;
      }
      if (UNSAFE_HEADER_VALUE.test(value)) {
        // `Headers` would throw with the value in its message: refuse it without echoing it.
        logger.warn({ server, variable }, 'environment variable for an upstream header contains CR, LF or NUL; header skipped');
        continue;
      }
      headers.set(name, value);
    }
    const response = await undiciFetch(input as string, {
      ...(init as object),
      headers,
      dispatcher,
      redirect: 'manual',
    } as Parameters<typeof undiciFetch>[1]);
    return response as unknown as Response;
  };

  return new StreamableHTTPClientTransport(new URL(config.url), { fetch: guardedFetch });
}
