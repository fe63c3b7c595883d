/**
 * `${env:NAME}` in an operator's config, end to end: a real gateway on 127.0.0.1 port 0 in this
 * process, a real HTTP upstream on 127.0.0.1 that records the headers it receives, a real stdio
 * child that reports its arguments and environment (dist/test/fixtures/env-report-server.js:
 * `npx tsc -p tsconfig.json` first), an SDK v2 client, and `portcullis check` as a child process.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { within } from './harness/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI_JS = join(ROOT, 'dist/src/main.js');
const REPORTER_JS = join(ROOT, 'dist/test/fixtures/env-report-server.js');
const dir = mkdtempSync(join(tmpdir(), 'portcullis-env-references-'));
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(() => {
  for (const file of [CLI_JS, REPORTER_JS]) if (!existsSync(file)) throw new Error(`${file} is missing: run \`npx tsc -p tsconfig.json\` first`);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An HTTP server on 127.0.0.1 that records each request's headers and answers 404 (not an MCP server). */
async function recorder(): Promise<{ url: string; first: Promise<IncomingHttpHeaders> }> {
  let seen!: (headers: IncomingHttpHeaders) => void;
  const first = new Promise<IncomingHttpHeaders>((resolve) => (seen = resolve));
  const server: Server = createServer((req, res) => {
    seen(req.headers);
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, first };
}

async function gateway(raw: Record<string, unknown>, env: Record<string, string>): Promise<RunningGateway> {
  const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, ...raw }, { baseDir: dir });
  const running = await startGateway({ config, logger: silentLogger(), env });
  cleanups.push(() => within(running.close(), 15_000, 'gateway close'));
  return running;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'env-references', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await within(client.connect(transport), 15_000, 'client connect');
  cleanups.push(() => within(client.close(), 5_000, 'client close'));
  return client;
}

describe('an upstream receives the header an operator wrote with ${env:NAME}', () => {
  it('sends "Bearer <value>" read from the gateway environment, as Cursor writes it', async () => {
    const upstream = await recorder();
    await gateway(
      {
        // Cursor's own shape: `mcpServers`, a bare `url`, the reference inside the value.
        mcpServers: { internal: { url: upstream.url, allowPrivateNetwork: true, mode: 'optional', headers: { Authorization: 'Bearer ${env:INTERNAL_MCP_TOKEN}' } } },
      },
      { INTERNAL_MCP_TOKEN: 'tok-from-env-7f3a' },
    );
    const headers = await within(upstream.first, 15_000, 'the upstream request');
    expect(headers.authorization).toBe('Bearer tok-from-env-7f3a');
  });

  it('reads a VS Code ${input:ID} from the variable the operator named for it', async () => {
    const upstream = await recorder();
    await gateway(
      {
        inputs: [{ type: 'promptString', id: 'team-key', description: 'Team key', password: true, portcullis: { env: 'TEAM_KEY' } }],
        servers: { team: { type: 'http', url: upstream.url, allowPrivateNetwork: true, mode: 'optional', headers: { 'X-Team-Key': '${input:team-key}' } } },
      },
      { TEAM_KEY: 'team-key-value-19' },
    );
    const headers = await within(upstream.first, 15_000, 'the upstream request');
    expect(headers['x-team-key']).toBe('team-key-value-19');
  });

  it('refuses to start when a referenced variable is unset, naming the variable and the field', async () => {
    const upstream = await recorder();
    const config = parseConfig({
      listen: { host: '127.0.0.1', port: 0 },
      mcpServers: { internal: { url: upstream.url, allowPrivateNetwork: true, headers: { Authorization: 'Bearer ${env:INTERNAL_MCP_TOKEN}' } } },
    });
    const failure = await startGateway({ config, logger: silentLogger(), env: {} }).then(
      (running) => {
        cleanups.push(() => running.close());
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).problems).toEqual(['servers.internal.headers.Authorization: environment variable INTERNAL_MCP_TOKEN is not set']);
  });
});

describe('a stdio child gets the args and env an operator wrote with ${env:NAME}', () => {
  it('fills both in when the child is built', async () => {
    const running = await gateway(
      {
        servers: {
          local: {
            transport: 'stdio',
            command: process.execPath,
            args: [REPORTER_JS, '--label=${env:REPORT_LABEL}', 'REPORT_TOKEN'],
            env: { REPORT_TOKEN: 'tok-${env:REPORT_SECRET}' },
          },
        },
      },
      { REPORT_LABEL: 'blue', REPORT_SECRET: 'child-secret-42', PATH: process.env.PATH ?? '' },
    );
    const client = await connect(running.url);
    const { tools } = await within(client.listTools(), 15_000, 'tools/list');
    const name = tools.map((t) => t.name).find((n) => n.endsWith('started_with'))!;
    const result = await within(client.callTool({ name, arguments: {} }), 15_000, 'tools/call');
    const report = JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as { args: string[]; env: Record<string, string | null> };
    expect(report.args).toEqual(['--label=blue', 'REPORT_TOKEN']);
    expect(report.env).toEqual({ REPORT_TOKEN: 'tok-child-secret-42' });
  });
});

let checks = 0;

function check(config: unknown, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const path = join(dir, `gateway-${++checks}.json`);
  writeFileSync(path, JSON.stringify(config));
  return within(
    new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI_JS, 'check', '--config', path], { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    }),
    20_000,
    'portcullis check',
  );
}

describe('portcullis check runs the rules the start runs', () => {
  const cursor = { mcpServers: { internal: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${env:INTERNAL_MCP_TOKEN}' } } } };

  it('fails on an unset variable, naming it and the field', async () => {
    const result = await check(cursor, {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('servers.internal.headers.Authorization: environment variable INTERNAL_MCP_TOKEN is not set');
    expect(result.stdout).toBe('');
  });

  it('passes with the variable set, and never prints its value', async () => {
    const result = await check(cursor, { INTERNAL_MCP_TOKEN: 'never-printed-9c1' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('configuration ok: 1 server(s)\n');
  });

  it('fails on an unset envHeaders variable, which the start refuses too', async () => {
    const result = await check({ servers: { docs: { transport: 'streamableHttp', url: 'https://mcp.example.com/mcp', envHeaders: { 'X-Docs-Token': 'DOCS_TOKEN' } } } }, {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('servers.docs.envHeaders.X-Docs-Token: environment variable DOCS_TOKEN is not set');
  });

  it('fails on a non-loopback bind without authentication', async () => {
    const result = await check({ listen: { host: '0.0.0.0' }, servers: {} }, {});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('listen.host: refusing to serve on 0.0.0.0');
  });

  it('warns of a /sse URL given as Streamable HTTP, with the fix', async () => {
    const result = await check({ mcpServers: { legacy: { url: 'https://mcp.example.com/sse' } } }, {});
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('portcullis: warning: servers.legacy.url: ends in /sse');
    expect(result.stderr).toContain('set "transport": "sse"');
    expect(result.stdout).toBe('configuration ok: 1 server(s), 1 warning(s)\n');
  });
});
