import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { silentLogger } from '../../src/observability/logger.js';
import { buildChildEnv } from '../../src/upstream/child-env.js';
import {
  killAllStdioChildren,
  StdioUpstreamTransport,
  type StdioUpstreamTransportOptions,
} from '../../src/upstream/stdio-transport.js';
import { waitUntil } from '../integration/harness/wait.js';

const children = path.join(path.dirname(fileURLToPath(import.meta.url)), 'children');
const opened: StdioUpstreamTransport[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((transport) => transport.close()));
});
afterAll(() => {
  killAllStdioChildren();
});

/** A transport running `node children/<script> ...args`, with its callbacks recorded. */
function harness(script: string, args: string[] = [], options: Partial<StdioUpstreamTransportOptions> = {}) {
  const transport = new StdioUpstreamTransport({
    serverName: 'test',
    command: process.execPath,
    args: [path.join(children, script), ...args],
    env: buildChildEnv(process.env, {}),
    framing: 'ndjson',
    logger: silentLogger(),
    ...options,
  });
  opened.push(transport);
  const received: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  let closes = 0;
  const waiters = new Map<string | number, (message: JSONRPCMessage) => void>();
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  transport.onmessage = (message) => {
    received.push(message);
    if ('id' in message && message.id !== undefined && !('method' in message)) waiters.get(message.id)?.(message);
  };
  transport.onerror = (error) => errors.push(error);
  transport.onclose = () => {
    closes++;
    resolveClosed();
  };
  let nextId = 1;
  /** Sends a request and resolves with its result. */
  async function request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = nextId++;
    const answered = new Promise<JSONRPCMessage>((resolve) => waiters.set(id, resolve));
    await transport.send({ jsonrpc: '2.0', id, method, params });
    const response = await Promise.race([answered, closed.then(() => Promise.reject(new Error('closed before answering')))]);
    return (response as { result: Record<string, unknown> }).result;
  }
  return { transport, received, errors, closed, request, closes: () => closes };
}

/** True while `pid` is a process that has not died (a zombie awaiting its reaper counts as dead). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): kill(0) is all we have
  }
}

/**
 * Waits (bounded) until `pid` is gone; a kill lands asynchronously. Polled: a grandchild is not
 * ours to wait for, so no event reports its death.
 */
function waitForDeath(pid: number): Promise<boolean> {
  return waitUntil(() => !isAlive(pid), `pid ${pid} to be gone`, 5_000, 25).then(
    () => true,
    () => false,
  );
}

function captureLogs() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

describe('StdioUpstreamTransport framing', () => {
  it('exchanges messages with an ndjson server', async () => {
    const { transport, request } = harness('ndjson-echo.mjs');
    await transport.start();
    expect(transport.pid).toBeTypeOf('number');
    expect(await request('echo', { n: 1 })).toEqual({ method: 'echo', params: { n: 1 } });
    expect(await request('echo', { text: 'héllo 🎉' })).toEqual({ method: 'echo', params: { text: 'héllo 🎉' } });
  });

  it('exchanges messages with a Content-Length server', async () => {
    const { transport, request } = harness('content-length-echo.mjs', [], { framing: 'contentLength' });
    await transport.start();
    expect(await request('echo', { n: 1 })).toEqual({ method: 'echo', params: { n: 1 } });
    expect(await request('echo', { n: 2 })).toEqual({ method: 'echo', params: { n: 2 } });
  });

  it('skips a banner line and logs it at debug, never at info', async () => {
    const { logger, lines } = captureLogs();
    const { transport, request, errors } = harness('ndjson-echo.mjs', ['--banner'], { logger });
    await transport.start();
    expect(await request('echo')).toEqual({ method: 'echo', params: {} });
    expect(errors).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ level: 20, server: 'test', msg: 'skipped a non-JSON line on stdout' }));
    expect(lines.filter((line) => (line.level as number) >= 30)).toEqual([]);
  });

  it('reads a message the child writes in many small pieces', async () => {
    const { transport, request } = harness('ndjson-echo.mjs');
    await transport.start();
    const text = 'multi-byte ✓ 日本語 🎉 '.repeat(8);
    expect(await request('test/split', { text, chunk: 3 })).toEqual({ text });
  });

  it('reads Content-Length frames written in many small pieces', async () => {
    const { transport, request } = harness('content-length-echo.mjs', ['--chunk=2'], { framing: 'contentLength' });
    await transport.start();
    expect(await request('echo', { text: 'é🎉' })).toEqual({ method: 'echo', params: { text: 'é🎉' } });
  });

  it('reports malformed and non-JSON-RPC output without its content, and goes on', async () => {
    const { transport, request, errors } = harness('ndjson-echo.mjs');
    await transport.start();
    expect(await request('test/garbage')).toEqual({ ok: true });
    expect(errors).toHaveLength(2);
    for (const error of errors) {
      expect(error).toBeInstanceOf(GatewayError);
      expect(error.message).toMatch(/^stdio server "test": skipped a/);
      expect(error.message).not.toContain('garbage-secret-123');
    }
    expect(await request('echo')).toEqual({ method: 'echo', params: {} });
  });

  it('closes the connection when a message exceeds maxMessageBytes, reporting UPSTREAM_MESSAGE_TOO_LARGE as the HTTP wires do', async () => {
    const { transport, errors, closed, closes } = harness('ndjson-echo.mjs', [], { maxMessageBytes: 1024 });
    await transport.start();
    const pid = transport.pid!;
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'test/big', params: { bytes: 4096 } });
    await closed;
    expect(errors.map((error) => [(error as { code?: string }).code, error.message])).toEqual([
      ['UPSTREAM_MESSAGE_TOO_LARGE', 'upstream "test": sent a message larger than 1024 bytes (limits.maxUpstreamMessageBytes); its connection was reset'],
    ]);
    expect(closes()).toBe(1);
    expect(await waitForDeath(pid)).toBe(true);
  });

  it('waits for the pipe to drain when the child is slow to read', async () => {
    const { transport, request } = harness('ndjson-echo.mjs', ['--startup-delay=300']);
    await transport.start();
    const pad = 'p'.repeat(256 * 1024);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => request('echo', { i, pad })));
    expect(results.map((result) => (result.params as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('StdioUpstreamTransport auto framing', () => {
  it('settles on ndjson when the child answers in ndjson', async () => {
    const { transport, request } = harness('ndjson-echo.mjs', [], { framing: 'auto' });
    await transport.start();
    expect(await request('echo', { n: 1 })).toEqual({ method: 'echo', params: { n: 1 } });
    expect(transport.framing).toBe('ndjson');
    expect(await request('test/stats')).toEqual({ requests: 2, skipped: 0 });
  });

  it('switches to Content-Length when the child speaks it first, re-sending the unanswered first message', async () => {
    const { transport, request, received } = harness('content-length-echo.mjs', ['--hello'], { framing: 'auto' });
    await transport.start();
    expect(await request('echo', { n: 1 })).toEqual({ method: 'echo', params: { n: 1 } });
    expect(transport.framing).toBe('contentLength');
    expect(await request('test/stats')).toEqual({ requests: 2 });
    expect(received.filter((message) => 'method' in message && message.method === 'test/hello')).toHaveLength(1);
  });

  it('re-sends the first message Content-Length-framed to a silent server that ignores ndjson', async () => {
    const { transport, request } = harness('content-length-echo.mjs', [], { framing: 'auto', detectWindowMs: 100 });
    await transport.start();
    expect(await request('echo', { n: 1 })).toEqual({ method: 'echo', params: { n: 1 } });
    expect(transport.framing).toBe('contentLength');
    expect(await request('echo', { n: 2 })).toEqual({ method: 'echo', params: { n: 2 } });
  });

  it('does not make a slow ndjson server handle the first message twice', async () => {
    const { transport, request, received } = harness('ndjson-echo.mjs', ['--startup-delay=500'], {
      framing: 'auto',
      detectWindowMs: 50,
    });
    await transport.start();
    expect(await request('echo', { n: 1 })).toEqual({ method: 'echo', params: { n: 1 } });
    expect(transport.framing).toBe('ndjson');
    const stats = await request('test/stats');
    expect(stats.requests).toBe(2);
    expect(stats.skipped).toBeGreaterThan(0); // the re-send reached it, as unparseable lines
    expect(received.filter((message) => 'id' in message && message.id === 1)).toHaveLength(1);
  });
});

describe('StdioUpstreamTransport process supervision', () => {
  it('refuses to start a missing command without naming it', async () => {
    const { transport, closes } = harness('unused.mjs', [], { command: 'portcullis-test-no-such-command' });
    const failure = await transport.start().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).code).toBe('UPSTREAM_START_FAILED');
    expect((failure as Error).message).toBe('stdio server "test": command not found (ENOENT): install it, or give its full path in servers.test.command (a bare name is looked up on PATH)');
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow('not connected');
    await transport.close();
    await transport.close();
    expect(closes()).toBe(1);
  });

  it('reports an unexpected exit with its code, then closes once', async () => {
    const { transport, errors, closed, closes } = harness('ndjson-echo.mjs');
    await transport.start();
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'test/crash', params: { code: 3 } });
    await closed;
    expect(errors.map((error) => error.message)).toEqual(['stdio server "test": process exited unexpectedly (exit code 3)']);
    expect(transport.exitStatus).toEqual({ code: 3, signal: null });
    expect(closes()).toBe(1);
    await expect(transport.send({ jsonrpc: '2.0', id: 2, method: 'ping' })).rejects.toThrow('not connected');
  });

  it('closes idempotently: the child is gone and onclose fired once', async () => {
    const { transport, request, errors, closes } = harness('ndjson-echo.mjs');
    await transport.start();
    await request('echo');
    const pid = transport.pid!;
    await Promise.all([transport.close(), transport.close()]);
    await transport.close();
    expect(closes()).toBe(1);
    expect(errors).toEqual([]);
    expect(transport.exitStatus).toBeDefined();
    expect(await waitForDeath(pid)).toBe(true);
  });

  it('kills the grandchildren with the child on close', async () => {
    const { transport, request } = harness('ndjson-echo.mjs');
    await transport.start();
    const { pid: grandchild } = (await request('test/grandchild')) as { pid: number };
    expect(isAlive(grandchild)).toBe(true);
    await transport.close();
    expect(await waitForDeath(grandchild)).toBe(true);
  });

  it('kills the grandchildren of a child that crashes', async () => {
    const { transport, request, closed } = harness('ndjson-echo.mjs');
    await transport.start();
    const { pid: grandchild } = (await request('test/grandchild')) as { pid: number };
    await transport.send({ jsonrpc: '2.0', id: 99, method: 'test/crash' });
    await closed;
    expect(await waitForDeath(grandchild)).toBe(true);
  });

  it('SIGKILLs a child that ignores SIGTERM once the grace period is over', async () => {
    const { transport, request, closes } = harness('ndjson-echo.mjs', ['--ignore-sigterm'], { killGraceMs: 200 });
    await transport.start();
    await request('echo'); // the SIGTERM handler is installed once the script answers
    await transport.close();
    expect(transport.exitStatus).toEqual({ code: null, signal: 'SIGKILL' });
    expect(closes()).toBe(1);
  });

  it('killAllStdioChildren kills every running child at once', async () => {
    const first = harness('ndjson-echo.mjs', ['--ignore-sigterm'], { killGraceMs: 60_000 });
    const second = harness('ndjson-echo.mjs', ['--ignore-sigterm'], { killGraceMs: 60_000 });
    await Promise.all([first.transport.start(), second.transport.start()]);
    await Promise.all([first.request('echo'), second.request('echo')]);
    expect(killAllStdioChildren()).toBeGreaterThanOrEqual(2);
    await Promise.all([first.closed, second.closed]);
    expect(first.transport.exitStatus?.signal).toBe('SIGKILL');
    expect(second.transport.exitStatus?.signal).toBe('SIGKILL');
  });

  it('logs stderr at debug with the server name, masking explicit env values', async () => {
    const { logger, lines } = captureLogs();
    const secret = 'hunter2-very-secret-token';
    const { transport, request } = harness('ndjson-echo.mjs', ['--stderr-secret'], {
      logger,
      env: buildChildEnv(process.env, { ECHO_SECRET: secret }),
    });
    await transport.start();
    await request('echo');
    await transport.close();
    const stderr = lines.filter((line) => line.msg === 'stdio server stderr');
    expect(stderr).toEqual([
      expect.objectContaining({ level: 20, server: 'test', stderr: 'using token=[redacted]' }),
      expect.objectContaining({ level: 20, server: 'test', stderr: 'ready' }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(secret);
    expect(JSON.stringify(lines)).not.toContain('ndjson-echo');
  });

  it('gives the child only the environment it was given', async () => {
    const { transport, request } = harness('ndjson-echo.mjs', [], {
      env: buildChildEnv({ ...process.env, GATEWAY_SECRET: 'x' }, { ONLY: 'this' }),
    });
    await transport.start();
    const { names } = (await request('test/env')) as { names: string[] };
    expect(names).toContain('ONLY');
    expect(names).not.toContain('GATEWAY_SECRET');
    const allowed = ['ONLY', 'PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'TERM'];
    expect(names.filter((name) => !allowed.includes(name))).toEqual([]);
  });
});

describe('StdioUpstreamTransport with the SDK Client', () => {
  it.each(['auto', 'ndjson'] as const)('lists and calls tools on an SDK MCP server (framing %s)', async (framing) => {
    const transport = new StdioUpstreamTransport({
      serverName: 'sdk',
      command: process.execPath,
      args: [path.join(children, 'mcp-server.mjs')],
      env: buildChildEnv(process.env, {}),
      framing,
      logger: silentLogger(),
    });
    opened.push(transport);
    const client = new Client({ name: 'portcullis-test', version: '0.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['add']);
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
    expect(result.content).toEqual([{ type: 'text', text: '42' }]);
    const pid = transport.pid!;
    await client.close();
    expect(await waitForDeath(pid)).toBe(true);
  });
});
