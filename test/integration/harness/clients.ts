/**
 * A real gateway in this process (`startGateway`, 127.0.0.1 port 0, silent logs) and SDK v2
 * clients of either protocol era connected to it, with helpers to read what they receive.
 */
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { parseConfig } from '../../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../../src/gateway.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { Changes, within, type Cleanup } from './wait.js';

/** A parsed gateway config listening on 127.0.0.1 port 0 (the schema fills every other default). */
export function gatewayConfig(servers: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers, ...extra });
}

/** Starts the gateway in this process; closed by `cleanup`. */
export async function startTestGateway(
  cleanup: Cleanup,
  servers: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<RunningGateway> {
  const gateway = await startGateway({ config: gatewayConfig(servers, extra), logger: silentLogger(), env: process.env });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
  return gateway;
}

/** `/mcp/servers/<name>` of a gateway whose MCP URL is `url`. */
export function sideChannelUrl(url: string, server: string): string {
  return `${url}/servers/${server}`;
}

/** `2025`: the SDK default (`legacy`: initialize + session); `2026`: `auto`, which negotiates 2026-07-28. */
export type Era = '2025' | '2026';
export const ERAS: readonly Era[] = ['2025', '2026'];

export interface ConnectOptions {
  capabilities?: ClientCapabilities;
  /** Registers handlers before connecting (server→client requests need them declared up front). */
  setup?: (client: Client) => void;
  /** Sent on every request (e.g. `Authorization: Bearer …`). */
  headers?: Record<string, string>;
}

export interface ConnectedClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

/** Connects an SDK v2 client of `era` to `url`; `cleanup` ends its session (DELETE) and closes it. */
export async function connectClient(cleanup: Cleanup, url: string, era: Era, options: ConnectOptions = {}): Promise<ConnectedClient> {
  const client = new Client(
    { name: `integration-${era}`, version: '1.0.0' },
    {
      capabilities: options.capabilities ?? {},
      ...(era === '2026' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    },
  );
  options.setup?.(client);
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    options.headers === undefined ? undefined : { requestInit: { headers: options.headers } },
  );
  await within(client.connect(transport), 15_000, `${era} client connect`);
  cleanup.add(async () => {
    // A polite 2025 client ends its session, so its upstream children do not pile up.
    if (transport.sessionId !== undefined) await within(transport.terminateSession(), 5_000, 'DELETE').catch(() => undefined);
    await within(client.close(), 5_000, 'client close').catch(() => undefined);
  });
  return { client, transport };
}

/** The text of the first content block of a tool result (empty when it is not text). */
export function textOf(result: { content?: unknown }): string {
  const first = (result.content as Array<{ type: string; text?: string }> | undefined)?.[0];
  return first?.type === 'text' ? (first.text ?? '') : '';
}

/** Collects the params of notifications of one method that reach `client`. */
export function collectNotifications<P = Record<string, unknown>>(client: Client, method: string) {
  const items: P[] = [];
  const arrivals = new Changes();
  client.setNotificationHandler(method as never, ((notification: { params?: unknown }) => {
    items.push((notification.params ?? {}) as P);
    arrivals.changed();
  }) as never);
  return {
    items,
    /** Resolves once `count` have arrived (hang guard `timeoutMs`). */
    waitFor: (count = 1, timeoutMs = 10_000) => arrivals.until(() => items.length >= count && items, `${count} × ${method}`, timeoutMs),
  };
}

/** The rejection of `promise` as plain values, for asserting on an error's shape. */
export async function errorOf(promise: Promise<unknown>): Promise<{ code?: number; message: string; data?: unknown }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: number; message?: string; data?: unknown };
    return { code: e.code, message: e.message ?? String(error), data: e.data };
  }
  throw new Error('expected the promise to reject, but it resolved');
}
