/**
 * Startup failures as a newcomer hits them, each with the real cause: the compiled CLI as a child
 * process, a real listener holding the port, a command that is not installed, a child that
 * crashes at start, an upstream URL the egress guard refuses. Each message names the server or
 * address and says what to change; none echoes a command, a URL or a secret.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Cleanup, CLI_JS, newMarker, ROOT, spawnCli, stdioServer, waitForExit, waitUntil } from './harness.js';

const cleanup = new Cleanup();
const dir = mkdtempSync(join(tmpdir(), 'portcullis-operator-errors-'));
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(config: unknown): string {
  const path = join(dir, `gateway-${randomUUID()}.json`);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** A real listener on 127.0.0.1 (closed in cleanup); `connections` counts who dialled it. */
async function loopbackListener(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, connections: () => connections };
}

/** A stdio server that leaves a file behind when it is spawned (and then serves nothing). */
function spawnWitness(file: string) {
  return { transport: 'stdio', command: process.execPath, args: ['-e', 'require("node:fs").writeFileSync(process.argv[1], "spawned")', file] };
}

describe('operator errors at start', () => {
  it('names the address and EADDRINUSE when the port is taken, before any upstream is spawned', async () => {
    const taken = await loopbackListener();
    const witness = join(dir, `spawned-${randomUUID()}`);
    const cli = spawnCli(cleanup, ['--config', configFile({ listen: { host: '127.0.0.1', port: taken.port }, servers: { notes: spawnWitness(witness) } })]);
    const exit = await cli.exited();
    expect(exit.code).toBe(1);
    expect(cli.stderr()).toContain(`portcullis: cannot listen on 127.0.0.1:${taken.port}: the address is already in use (EADDRINUSE)`);
    expect(cli.stderr()).toContain('--port or listen.port');
    expect(existsSync(witness)).toBe(false);
  });

  it('says "command not found" (ENOENT) naming the server, not the command', async () => {
    const command = `portcullis-not-installed-${randomUUID()}`;
    const cli = spawnCli(cleanup, ['--config', configFile({ listen: { port: 0 }, servers: { ghost: { transport: 'stdio', command } } })]);
    expect((await cli.exited()).code).toBe(1);
    expect(cli.stderr()).toContain('upstream "ghost": command not found (ENOENT)');
    expect(cli.stderr()).toContain('servers.ghost.command');
    expect(cli.stderr()).not.toContain(command);
  });

  it('gives the exit code and last stderr lines of a server that exits at start, secrets masked, at the default level', async () => {
    const secret = `s3cr3t-${randomUUID()}`;
    const script = [
      'for (let i = 1; i <= 8; i++) console.error("loading plugin " + i);',
      'console.error("fatal: token " + process.env.SERVICE_TOKEN + " was rejected");',
      'process.exit(3);',
    ].join('\n');
    const cli = spawnCli(cleanup, [
      '--config',
      configFile({ listen: { port: 0 }, servers: { crashy: { transport: 'stdio', command: process.execPath, args: ['-e', script], env: { SERVICE_TOKEN: secret } } } }),
    ]);
    expect((await cli.exited()).code).toBe(1);
    const stderr = cli.stderr();
    expect(stderr).toContain('upstream "crashy": exited at start with exit code 3; its last stderr lines:');
    expect(stderr).toContain('| fatal: token');
    expect(stderr).toContain('| loading plugin 8');
    expect(stderr).not.toContain('loading plugin 3'); // the last five lines only
    expect(stderr).not.toContain(secret);
  });

  it('says a refused connection is refused, naming the server and what to do, not a negotiation failure', async () => {
    // A loopback port that was just free: nothing listens there now.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const cli = spawnCli(cleanup, ['--config', configFile({ listen: { port: 0 }, servers: { down: { transport: 'streamableHttp', url: `http://127.0.0.1:${port}/mcp`, allowPrivateNetwork: true } } })]);
    expect((await cli.exited()).code).toBe(1);
    expect(cli.stderr()).toContain(
      'upstream "down": connection refused (ECONNREFUSED): nothing accepts connections at the host and port of servers.down.url; start the server, or correct the URL',
    );
    expect(cli.stderr()).not.toContain('ERA_NEGOTIATION_FAILED');
    expect(cli.stderr()).not.toContain(String(port));
  });

  it('says an HTTP upstream is blocked by the egress guard and which setting allows it, and never dials it', async () => {
    const target = await loopbackListener();
    const cli = spawnCli(cleanup, ['--config', configFile({ listen: { port: 0 }, servers: { intranet: { transport: 'streamableHttp', url: `https://127.0.0.1:${target.port}/mcp` } } })]);
    expect((await cli.exited()).code).toBe(1);
    expect(cli.stderr()).toContain(
      'upstream "intranet": blocked: its URL resolves to a loopback address, and the egress guard refuses loopback and private addresses; set "allowPrivateNetwork": true on servers.intranet if that is intended',
    );
    expect(cli.stderr()).not.toContain('ERA_NEGOTIATION_FAILED');
    expect(cli.stderr()).not.toContain(String(target.port));
    expect(target.connections()).toBe(0);
  });

  it('has `portcullis check` warn about those upstreams before a run (exit 0, nothing dialled)', async () => {
    const target = await loopbackListener();
    const path = configFile({
      servers: {
        intranet: { transport: 'streamableHttp', url: `https://127.0.0.1:${target.port}/mcp` },
        dev: { transport: 'streamableHttp', url: 'https://localhost/mcp' },
        opted: { transport: 'streamableHttp', url: `https://127.0.0.1:${target.port}/mcp`, allowPrivateNetwork: true },
      },
    });
    const cli = spawnCli(cleanup, ['check', '--config', path]);
    expect((await cli.exited()).code).toBe(0);
    expect(cli.stdout()).toContain('configuration ok: 3 server(s), 2 warning(s)');
    expect(cli.stderr()).toContain('portcullis: warning: servers.intranet.url: will be blocked: its URL resolves to a loopback address');
    expect(cli.stderr()).toContain('portcullis: warning: servers.dev.url: will be blocked: its URL names localhost');
    expect(cli.stderr()).not.toContain('servers.opted');
    expect(target.connections()).toBe(0);
  });

  it('warns once the tool list is known about enabledTools naming tools the upstream does not have', async () => {
    const cli = spawnCli(cleanup, [
      '--config',
      configFile({ listen: { port: 0 }, servers: { fx: stdioServer(newMarker(), { enabledTools: ['test_simple_text', 'test_simple_txet'] }) } }),
    ]);
    await cli.waitForLine(/^\[portcullis\]:Ready\. (\S+)$/);
    const line = await waitUntil(
      () => cli.stderr().split('\n').find((l) => l.includes('enabledTools names')),
      'the enabledTools warning',
    );
    const parsed = JSON.parse(line) as { level: number; server: string; missing: string[]; msg: string };
    expect(parsed.level).toBe(40);
    expect(parsed.server).toBe('fx');
    expect(parsed.missing).toEqual(['test_simple_txet']);
    expect(parsed.msg).toBe('servers.fx.enabledTools names 1 tool(s) the upstream does not list; check their spelling');
  });

  it('prints every "upstream ready" line before the Ready line', async () => {
    const path = configFile({ listen: { port: 0 }, servers: { a: stdioServer(newMarker()), b: stdioServer(newMarker()) } });
    // One pipe for both streams, as a terminal or `2>&1 | tee` shows them.
    const child = spawn('/bin/sh', ['-c', 'exec "$0" "$1" --config "$2" 2>&1', process.execPath, CLI_JS, path], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    cleanup.add(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await waitForExit(child).catch(() => undefined);
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await waitUntil(() => output.includes('[portcullis]:Ready.'), 'the Ready line');
    const lines = output.split('\n');
    const ready = lines.findIndex((l) => l.startsWith('[portcullis]:Ready.'));
    const upstreamReady = lines.flatMap((l, i) => (l.includes('"msg":"upstream ready"') ? [i] : []));
    expect(upstreamReady).toHaveLength(2);
    expect(Math.max(...upstreamReady)).toBeLessThan(ready);
  });
});
