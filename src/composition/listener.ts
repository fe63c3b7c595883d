/**
 * The gateway's HTTP listener, opened before anything that spawns or connects: a port in use, or
 * a bind the policy refuses, is reported without a child ever being spawned. Until the app is
 * built (it needs the bound port for the default Origin allowlist) the listener's gate answers
 * every request 503 `STARTING`; `open` lets requests through to the app, once.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type RequestListener, type Server as HttpServer, type ServerOptions } from 'node:http';
import { serve } from '@hono/node-server';
import { errorResponse, GatewayError } from '../errors.js';
import { withLowerCaseHost } from '../inbound/header-lines.js';
import { listenFailure } from '../inbound/listen-failure.js';

export type FetchHandler = (request: Request, env: unknown) => Response | Promise<Response>;

export interface ListenOptions {
  host: string;
  port: number;
  /** Request headers over this get 431 from node:http before any handler runs. */
  maxHeaderBytes: number;
  /** How long a client may take to send a whole request. */
  requestTimeoutMs: number;
  /** Reads the address actually bound (tests substitute one; default `server.address()`). */
  addressOf?: (server: HttpServer) => AddressInfo;
}

export interface Listener {
  readonly address: AddressInfo;
  /** Lets requests through to `app` from now on (once; before it every request is answered 503). */
  open(app: FetchHandler): void;
  /** Stops accepting connections; those open go on being served until `close`. Idempotent. */
  stopAccepting(): void;
  /** Stops accepting and ends every connection. Idempotent. */
  close(): Promise<void>;
}

const STARTING = new GatewayError('STARTING', 'the gateway is starting its upstream servers; retry shortly', { retryAfterMs: 1_000 });

/** Binds `options.host:port`; rejects with the operator's `listenFailure` when it cannot. */
export async function listen(options: ListenOptions): Promise<Listener> {
  let app: FetchHandler | undefined;
  const gate: FetchHandler = (request, env) => (app === undefined ? errorResponse(STARTING) : app(request, env));
  let http: HttpServer;
  try {
    http = await bind(gate, options);
  } catch (error) {
    throw listenFailure(options.host, options.port, error);
  }
  let stopped: Promise<void> | undefined;
  const stopAccepting = () => {
    stopped ??= new Promise<void>((resolve) => http.close(() => resolve()));
  };
  return {
    address: (options.addressOf ?? ((server) => server.address() as AddressInfo))(http),
    open(handler) {
      if (app !== undefined) throw new Error('the listener is already serving');
      app = handler;
    },
    stopAccepting,
    async close() {
      stopAccepting();
      http.closeAllConnections();
      await stopped;
    },
  };
}

function bind(fetch: FetchHandler, options: ListenOptions): Promise<HttpServer> {
  const { requestTimeoutMs } = options;
  return new Promise((resolve, reject) => {
    const serverOptions = { maxHeaderSize: options.maxHeaderBytes, connectionsCheckingInterval: Math.min(5_000, Math.ceil(requestTimeoutMs / 4)) };
    const createHostCaseServer = ((serverOptions: ServerOptions, listener: RequestListener) =>
      createServer(serverOptions, withLowerCaseHost(listener))) as unknown as typeof createServer;
    const server = serve({ fetch, hostname: options.host, port: options.port, serverOptions, createServer: createHostCaseServer }, () =>
      resolve(server as HttpServer),
    ) as HttpServer;
    server.once('error', reject);
    // Slow clients are cut: headers within 10 s, the whole request (headers and body) within
    // 30 s. Node's requestTimeout bounds receiving the request only; a long SSE response that
    // follows it is not affected (measured).
    server.headersTimeout = Math.min(10_000, requestTimeoutMs);
    server.requestTimeout = requestTimeoutMs;
    server.keepAliveTimeout = 5_000;
  });
}
