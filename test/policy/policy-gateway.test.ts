/**
 * The policy wired into a running gateway: real gateways on 127.0.0.1 port 0 in this process,
 * the compiled fixture server over stdio (`npx tsc -p tsconfig.json` first), SDK v2 clients and
 * raw node:http requests. Nothing here binds anything but 127.0.0.1.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { GatewayError } from '../../src/errors.js';
import { startGateway, type GatewayOptions, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE_JS = join(ROOT, 'dist/test/fixtures/conformance-server.js');

const dir = mkdtempSync(join(tmpdir(), 'portcullis-policy-gateway-'));
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(() => {
  if (!existsSync(FIXTURE_JS)) throw new Error(`${FIXTURE_JS} is missing: run \`npx tsc -p tsconfig.json\` first`);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang guard: ${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

function writePolicy(name: string, policy: unknown): string {
  writeFileSync(join(dir, name), JSON.stringify(policy));
  return `./${name}`;
}

const fixture = { transport: 'stdio', command: process.execPath, args: [FIXTURE_JS, '--stdio'] };

async function gateway(raw: Record<string, unknown>, options: Partial<GatewayOptions> = {}): Promise<RunningGateway> {
  const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, ...raw }, { baseDir: dir });
  const running = await startGateway({ config, logger: silentLogger(), env: {}, ...options });
  cleanups.push(() => within(running.close(), 15_000, 'gateway close'));
  return running;
}

async function connect(url: string, era: '2025' | '2026'): Promise<Client> {
  const client = new Client(
    { name: `policy-${era}`, version: '1.0.0' },
    era === '2026' ? { versionNegotiation: { mode: 'auto' } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await within(client.connect(transport), 15_000, 'client connect');
  cleanups.push(async () => {
    if (transport.sessionId !== undefined) await within(transport.terminateSession(), 5_000, 'DELETE').catch(() => undefined);
    await within(client.close(), 5_000, 'client close');
  });
  return client;
}

async function toolNames(client: Client): Promise<string[]> {
  const { tools } = await within(client.listTools(), 15_000, 'tools/list');
  return tools.map((tool) => tool.name);
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request to the gateway on 127.0.0.1, headers exactly as given (Host included when given). */
function raw(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawResponse> {
  const target = new URL(url);
  if (target.hostname !== '127.0.0.1') throw new Error('raw() only talks to 127.0.0.1');
  const exchange = new Promise<RawResponse>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: target.port, path: target.pathname, method: options.method ?? 'POST', headers: options.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    // The server may answer (413, 431) and close before the whole request is written.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    req.end(options.body);
  });
  return within(exchange, 10_000, 'raw request');
}

const JSON_POST = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

describe('deniedTools through the running gateway', () => {
  const policy = writePolicy('deny.json', { deniedTools: ['fx__crash', 'FX__TOGGLE_*'] });

  /** [separator, how the aggregate exposes `crash`, how it exposes `echo`] */
  const layouts: Array<[string | null, string, string]> = [
    ['__', 'fx__crash', 'fx__echo'],
    ['-', 'fx-crash', 'fx-echo'],
    [null, 'crash', 'echo'],
  ];

  describe.each(layouts)('with separator %s', (separator, crash, echo) => {
    it.each(['2025', '2026'] as const)('hides denied tools from a %s client and refuses to call them', async (era) => {
      const running = await gateway({ policy, catalogue: { separator }, servers: { fx: fixture } });
      const client = await connect(running.url, era);
      const names = await toolNames(client);
      expect(names).toContain(echo);
      expect(names).not.toContain(crash);
      expect(names.some((name) => name.toLowerCase().includes('toggle_tool'))).toBe(false);

      await expect(within(client.callTool({ name: crash, arguments: {} }), 15_000, 'tools/call')).rejects.toThrow(/Unknown tool/);
      const echoed = await within(client.callTool({ name: echo, arguments: { text: 'still here' } }), 15_000, 'tools/call');
      expect(echoed.content).toEqual([{ type: 'text', text: 'still here' }]);
    });
  });

  it('denies on the canonical name on a per-server endpoint, where names are not namespaced', async () => {
    const running = await gateway({ policy, servers: { fx: fixture } });
    const client = await connect(`${running.url}/servers/fx`, '2025');
    const names = await toolNames(client);
    expect(names).toContain('echo');
    expect(names).not.toContain('crash');
    expect(names).not.toContain('toggle_tool');
    await expect(within(client.callTool({ name: 'crash', arguments: {} }), 15_000, 'tools/call')).rejects.toThrow(/Unknown tool/);
    await expect(within(client.callTool({ name: 'toggle_tool', arguments: {} }), 15_000, 'tools/call')).rejects.toThrow(/Unknown tool/);
  });
});

describe('inbound limits from the policy and the config', () => {
  const policy = writePolicy('limits.json', { limits: { maxBodyBytes: 4096, maxJsonDepth: 8, maxHeaderBytes: 4096 } });

  it('refuses a body over the policy limit with 413', async () => {
    const running = await gateway({ policy, servers: {} });
    const padded = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5000) } });
    expect((await raw(running.url, { headers: JSON_POST, body: padded })).status).toBe(413);
  });

  it('refuses a body over a narrower config limit with 413', async () => {
    const running = await gateway({ policy, servers: {}, limits: { maxBodyBytes: 1024 } });
    const padded = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2000) } });
    expect((await raw(running.url, { headers: JSON_POST, body: padded })).status).toBe(413);
  });

  it('refuses JSON nested deeper than the policy limit', async () => {
    const running = await gateway({ policy, servers: {} });
    const deep = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: JSON.parse('{"a":'.repeat(9) + '1' + '}'.repeat(9)) });
    const response = await raw(running.url, { headers: JSON_POST, body: deep });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: -32600 } });
  });

  it('refuses request headers over the policy limit with 431', async () => {
    const running = await gateway({ policy, servers: {} });
    const response = await raw(running.url, { headers: { ...JSON_POST, 'x-padding': 'y'.repeat(6000) }, body: PING });
    expect(response.status).toBe(431);
  });

  it('accepts headers within the limit', async () => {
    const running = await gateway({ policy, servers: {} });
    const response = await raw(running.url, { headers: { ...JSON_POST, 'x-padding': 'y'.repeat(1000) }, body: PING });
    expect(response.status).not.toBe(431);
  });

  it('caps live sessions at the policy limit', async () => {
    const capped = writePolicy('one-session.json', { limits: { maxSessions: 1 } });
    const running = await gateway({ policy: capped, servers: {} });
    await connect(running.url, '2025');
    await expect(connect(running.url, '2025')).rejects.toThrow();
  });
});

describe('allowedHosts and allowedOrigins from the policy', () => {
  it('admits only the Host names the policy lists', async () => {
    const policy = writePolicy('hosts.json', { allowedHosts: ['gateway.internal.test'] });
    const running = await gateway({ policy, servers: {} });
    const port = new URL(running.url).port;
    expect((await raw(running.url, { headers: { ...JSON_POST, host: `127.0.0.1:${port}` }, body: PING })).status).toBe(403);
    expect((await raw(running.url, { headers: { ...JSON_POST, host: `gateway.internal.test:${port}` }, body: PING })).status).not.toBe(403);
  });

  it('admits the loopback origins of the bound port by default', async () => {
    const running = await gateway({ servers: {} });
    const origin = `http://127.0.0.1:${new URL(running.url).port}`;
    expect((await raw(running.url, { headers: { ...JSON_POST, origin }, body: PING })).status).not.toBe(403);
    expect((await raw(running.url, { headers: { ...JSON_POST, origin: 'https://evil.example' }, body: PING })).status).toBe(403);
  });

  it('admits no browser origin under an empty allowedOrigins', async () => {
    const policy = writePolicy('no-origins.json', { allowedOrigins: [] });
    const running = await gateway({ policy, servers: {} });
    const origin = `http://127.0.0.1:${new URL(running.url).port}`;
    expect((await raw(running.url, { headers: { ...JSON_POST, origin }, body: PING })).status).toBe(403);
    expect((await raw(running.url, { headers: JSON_POST, body: PING })).status).not.toBe(403);
  });

  it('admits exactly the origins a policy lists', async () => {
    const policy = writePolicy('app-origin.json', { allowedOrigins: ['https://app.example.com'] });
    const running = await gateway({ policy, servers: {} });
    expect((await raw(running.url, { headers: { ...JSON_POST, origin: 'https://app.example.com' }, body: PING })).status).not.toBe(403);
    const loopback = `http://127.0.0.1:${new URL(running.url).port}`;
    expect((await raw(running.url, { headers: { ...JSON_POST, origin: loopback }, body: PING })).status).toBe(403);
  });
});

describe('envHeaders under the policy', () => {
  let recorder: Server;
  let seen: IncomingHttpHeaders[];
  /** Resolves on the recorder's first request. */
  let reached: Promise<void>;

  beforeAll(async () => {
    seen = [];
    let arrived!: () => void;
    reached = new Promise((resolve) => (arrived = resolve));
    recorder = createServer((req, res) => {
      seen.push(req.headers);
      arrived();
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => recorder.close(() => resolve())));

  it('sends a variable the policy allows, read from the gateway environment', async () => {
    const policy = writePolicy('env-allow.json', { envHeaderNames: { allow: ['DOCS_TOKEN'] } });
    const url = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/mcp`;
    await gateway(
      {
        policy,
        servers: {
          docs: { transport: 'streamableHttp', url, allowPrivateNetwork: true, mode: 'optional', envHeaders: { 'X-Docs-Token': 'DOCS_TOKEN' } },
        },
      },
      { env: { DOCS_TOKEN: 'tok-from-env', AWS_SECRET_ACCESS_KEY: 'never-sent' } },
    );
    await within(reached, 15_000, 'the gateway reaching the docs upstream');
    expect(seen[0]!['x-docs-token']).toBe('tok-from-env');
    expect(JSON.stringify(seen)).not.toContain('never-sent');
  });
});

describe('the bind rule on the address actually bound', () => {
  /** Binds 127.0.0.1 for real, then reports a wildcard address: no public interface is ever bound. */
  function pretendBound(address: string, family: string) {
    let real: AddressInfo | undefined;
    return {
      addressOf: (server: Server) => {
        real = server.address() as AddressInfo;
        return { address, family, port: real.port };
      },
      realPort: () => real?.port,
    };
  }

  it.each([
    ['0.0.0.0', 'IPv4'],
    ['::', 'IPv6'],
  ])('refuses %s without authentication or acknowledgedNoAuth, and closes the listener', async (address, family) => {
    const pretend = pretendBound(address, family);
    const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers: { fx: fixture } });
    const failure = await startGateway({ config, logger: silentLogger(), env: {}, addressOf: pretend.addressOf }).then(
      (running) => {
        cleanups.push(() => running.close());
        throw new Error('the gateway started');
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).code).toBe('BIND_REFUSED');
    expect((failure as GatewayError).message).toContain('"acknowledgedNoAuth": true in the policy');
    const port = pretend.realPort();
    expect(port).toBeDefined();
    // The listener is closed: nothing answers on the port any more.
    await expect(raw(`http://127.0.0.1:${port}/healthz`, { method: 'GET' })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('starts on a non-loopback address when the policy acknowledges no authentication', async () => {
    const policy = writePolicy('ack.json', { acknowledgedNoAuth: true });
    const pretend = pretendBound('0.0.0.0', 'IPv4');
    const running = await gateway({ policy, servers: {} }, { addressOf: pretend.addressOf });
    expect(running.port).toBe(pretend.realPort());
  });

  it('starts on 127.0.0.1 under the default policy', async () => {
    const running = await gateway({ servers: {} });
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });
});
