/**
 * The paths the bench drives, each started on 127.0.0.1 only:
 *
 * - `direct`: the SDK echo server over Streamable HTTP (JSON responses), no proxy;
 * - `passthrough`: a byte relay (node:http, `servers/passthrough.ts`) in front of that server;
 * - `mcp-relay`: a minimal MCP-aware relay in front of it (`servers/mcp-relay.ts`: parse, rename,
 *   forward, check the answer's id), the floor of a message-level gateway;
 * - `portcullis-http` / `portcullis-stdio`: the gateway (default config) fronting that HTTP
 *   server, or a stdio echo child, driven by 2025-era clients (one session each);
 * - `portcullis-http-2026` / `portcullis-stdio-2026`: the same gateways driven by 2026-07-28
 *   clients (no session: every request carries its `_meta` envelope and standard headers);
 * - `mcp-proxy` / `supergateway`: the popular npm proxies fronting the same stdio echo.
 *
 * Every listening socket of a started proxy is read back from /proc; anything but loopback stops
 * the bench (supergateway has no host option and is pinned by the `loopback-listen` preload).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { closeSession, openSession, rpc, type McpSession } from './lib/mcp-session.js';
import { allLoopback, listeningAddresses } from './lib/proc.js';
import { freeLoopbackPort } from './lib/ports.js';
import { spawnTracked, type TrackedProcess } from './lib/processes.js';
import { rivalFile } from './lib/rivals.js';

export type PathId =
  | 'direct'
  | 'passthrough'
  | 'mcp-relay'
  | 'portcullis-http'
  | 'portcullis-stdio'
  | 'portcullis-http-2026'
  | 'portcullis-stdio-2026'
  | 'mcp-proxy'
  | 'supergateway';

/** The paths a run drives when `--paths` is not given (the 2026-client paths are asked for by name). */
export const PATH_IDS: readonly PathId[] = ['direct', 'passthrough', 'mcp-relay', 'portcullis-http', 'portcullis-stdio', 'mcp-proxy', 'supergateway'];

/** Every path `--paths` may name. */
export const KNOWN_PATH_IDS: readonly PathId[] = [...PATH_IDS, 'portcullis-http-2026', 'portcullis-stdio-2026'];

/** The protocol era of the bench's client on each path: 2026 only where the path says so. */
export function clientEra(id: PathId): '2025' | '2026' {
  return id === 'portcullis-http-2026' || id === 'portcullis-stdio-2026' ? '2026' : '2025';
}

/** The gateway's paths, whichever era drives them. */
function isGatewayPath(id: PathId): boolean {
  return id === 'portcullis-http' || id === 'portcullis-stdio' || id === 'portcullis-http-2026' || id === 'portcullis-stdio-2026';
}

export const PATH_LABELS: Readonly<Record<PathId, string>> = {
  direct: 'direct HTTP echo',
  passthrough: 'byte passthrough → HTTP echo',
  'mcp-relay': 'minimal MCP relay → HTTP echo',
  'portcullis-http': 'Portcullis → HTTP echo',
  'portcullis-stdio': 'Portcullis → stdio echo',
  'portcullis-http-2026': 'Portcullis → HTTP echo, 2026 client',
  'portcullis-stdio-2026': 'Portcullis → stdio echo, 2026 client',
  'mcp-proxy': 'mcp-proxy → stdio echo',
  supergateway: 'supergateway → stdio echo',
};

/** The echo tool's name as each path exposes it (Portcullis namespaces `<server>__<tool>`). */
export const TOOL_NAME: Readonly<Record<PathId, string>> = {
  direct: 'echo',
  passthrough: 'echo',
  'mcp-relay': 'echo__echo',
  'portcullis-http': 'echo__echo',
  'portcullis-stdio': 'echo__echo',
  'portcullis-http-2026': 'echo__echo',
  'portcullis-stdio-2026': 'echo__echo',
  'mcp-proxy': 'echo',
  supergateway: 'echo',
};

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SCRIPTS = {
  gateway: join(ROOT, 'dist/src/main.js'),
  echoHttp: join(ROOT, 'dist/bench/servers/echo-http.js'),
  echoStdio: join(ROOT, 'dist/bench/servers/echo-stdio.js'),
  passthrough: join(ROOT, 'dist/bench/servers/passthrough.js'),
  mcpRelay: join(ROOT, 'dist/bench/servers/mcp-relay.js'),
  loopbackPreload: pathToFileURL(join(ROOT, 'dist/bench/lib/loopback-listen.js')).href,
  gcProbePreload: pathToFileURL(join(ROOT, 'dist/bench/lib/gc-probe.js')).href,
  mcpProxy: rivalFile('mcp-proxy', 'dist/bin/mcp-proxy.mjs'),
  supergateway: rivalFile('supergateway', 'dist/index.js'),
};

export interface BenchContext {
  logDir: string;
  /** The long-lived HTTP echo that `portcullis-http` fronts (and `direct` reuses when running). */
  upstreamUrl: string;
  /** That echo's process id (a server process of every path that fronts it, for pinning and CPU). */
  upstreamPid?: number;
  /** Extra node flags for Portcullis processes (e.g. `--cpu-prof`). */
  gatewayNodeFlags?: readonly string[];
}

export interface StartedPath {
  id: PathId;
  url: string;
  /** The process whose memory is reported (the proxy; the echo server for `direct`). */
  process: TrackedProcess;
  /**
   * Every server process of the path (descendants are found when needed): the proxy and, for a
   * path in front of the shared HTTP echo, that echo. They are pinned together and their CPU is
   * the path's "whole path" CPU.
   */
  serverRoots: number[];
}

export type ServerEntries = Record<string, Record<string, unknown>>;

/** A Portcullis config (defaults everywhere but the listen address and the servers). */
export function gatewayConfig(port: number, servers: ServerEntries, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { listen: { host: '127.0.0.1', port, path: '/mcp' }, ...extra, servers };
}

export function httpEcho(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { transport: 'streamableHttp', url, allowPrivateNetwork: true, ...extra };
}

export function stdioEcho(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { transport: 'stdio', command: process.execPath, args: [SCRIPTS.echoStdio], ...extra };
}

let serial = 0;

export interface StartedGateway {
  url: string;
  process: TrackedProcess;
  /** When the Ready line arrived: `Date.now()` and `performance.now()`. */
  readyEpoch: number;
  readyAt: number;
}

/** Starts Portcullis on a given config; resolves once its Ready line is printed. */
export async function startGateway(ctx: BenchContext, name: string, config: Record<string, unknown>): Promise<StartedGateway> {
  const file = join(ctx.logDir, `${name}-${++serial}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  const proc = spawnTracked(`${name}-${serial}`, [...(ctx.gatewayNodeFlags ?? []), SCRIPTS.gateway, '--config', file], {
    logDir: ctx.logDir,
    readStdout: true,
  });
  const ready = await proc.waitForLine(/^\[portcullis\]:Ready\. /, 30_000);
  const url = ready.line.replace(/^\[portcullis\]:Ready\. /, '').trim();
  await assertLoopbackOnly(proc);
  return { url, process: proc, readyEpoch: ready.epoch, readyAt: ready.at };
}

/** Starts a standalone HTTP echo server; resolves with its URL once it listens. */
export async function startEchoHttp(ctx: BenchContext, port = 0): Promise<StartedPath> {
  const proc = spawnTracked(`echo-http-${++serial}`, [SCRIPTS.echoHttp, '--port', String(port)], { logDir: ctx.logDir, readStdout: true });
  const ready = await proc.waitForLine(/^ECHO_READY /, 30_000);
  await assertLoopbackOnly(proc);
  return { id: 'direct', url: ready.line.slice('ECHO_READY '.length).trim(), process: proc, serverRoots: [proc.pid] };
}

/** Command line of each path's process for a given port (0 only where the tool reports it). */
function argvFor(id: PathId, ctx: BenchContext, port: number, configFile: string): string[] {
  switch (id) {
    case 'direct':
      return [SCRIPTS.echoHttp, '--port', String(port)];
    case 'passthrough':
      return [SCRIPTS.passthrough, '--port', String(port), '--upstream', ctx.upstreamUrl];
    case 'mcp-relay':
      return [SCRIPTS.mcpRelay, '--port', String(port), '--upstream', ctx.upstreamUrl];
    case 'portcullis-http':
    case 'portcullis-stdio':
    case 'portcullis-http-2026':
    case 'portcullis-stdio-2026':
      return [...(ctx.gatewayNodeFlags ?? []), SCRIPTS.gateway, '--config', configFile];
    case 'mcp-proxy':
      // No resumability store: Portcullis keeps none either, and request/response load needs none.
      return [SCRIPTS.mcpProxy, '--host', '127.0.0.1', '--port', String(port), '--server', 'stream', '--no-eventStore', '--', process.execPath, SCRIPTS.echoStdio];
    case 'supergateway':
      // Stateful (sessions; its stateless mode spawns a child per POST). Logging off: its info
      // level logs every message, and the comparison should not charge it for that.
      return [
        '--import',
        SCRIPTS.loopbackPreload,
        SCRIPTS.supergateway,
        '--stdio',
        `${shellSafe(process.execPath)} ${shellSafe(SCRIPTS.echoStdio)}`,
        '--outputTransport',
        'streamableHttp',
        '--stateful',
        '--port',
        String(port),
        '--logLevel',
        'none',
      ];
    default: {
      const unreachable: never = id;
      throw new TypeError(`unknown path ${String(unreachable)}`);
    }
  }
}

/** supergateway runs `--stdio` through a shell: only plain path characters are passed to it. */
function shellSafe(path: string): string {
  if (!/^[A-Za-z0-9/._-]+$/.test(path)) throw new Error('supergateway path: the bench refuses paths with shell-special characters');
  return path;
}

/**
 * Spawns one path's process on a known port, without waiting. Cold starts poll it from spawn;
 * long-lived runs use `startPath`.
 */
export function spawnPath(id: PathId, ctx: BenchContext, port: number): TrackedProcess {
  let configFile = '';
  if (isGatewayPath(id)) {
    configFile = join(ctx.logDir, `${id}-${++serial}.json`);
    const server = id === 'portcullis-http' || id === 'portcullis-http-2026' ? httpEcho(ctx.upstreamUrl) : stdioEcho();
    writeFileSync(configFile, JSON.stringify(gatewayConfig(port, { echo: server }), null, 2));
  }
  const readStdout = isGatewayPath(id) || id === 'direct';
  return spawnTracked(`${id}-${++serial}`, argvFor(id, ctx, port, configFile), { logDir: ctx.logDir, readStdout });
}

export function pathUrl(port: number): string {
  return `http://127.0.0.1:${port}/mcp`;
}

/**
 * Polls a freshly spawned path until an initialized session answers `tools/list`; returns the
 * time from spawn (ms) and closes the probe session.
 */
export async function untilToolsList(proc: TrackedProcess, url: string, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let lastError = 'not tried';
  while (performance.now() < deadline) {
    if (proc.exited) throw new Error(`${proc.name} exited during start; log tail:\n${proc.logTail()}`);
    let session: McpSession | undefined;
    try {
      session = await openSession(url, AbortSignal.timeout(Math.max(1, Math.ceil(deadline - performance.now()))));
      const result = await rpc(session, 'tools/list');
      if (Array.isArray(result.tools) && result.tools.length > 0) {
        const elapsed = performance.now() - proc.spawnedAt;
        await closeSession(session);
        return elapsed;
      }
      lastError = 'empty tool list';
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
      if (session !== undefined) await closeSession(session);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${proc.name}: no tools/list within ${timeoutMs} ms (${lastError}); log tail:\n${proc.logTail()}`);
}

/** Starts one path for the load phase and waits until it serves an initialized session. */
export async function startPath(id: PathId, ctx: BenchContext): Promise<StartedPath> {
  if (id === 'direct') return startEchoHttp(ctx);
  const port = await freeLoopbackPort();
  const proc = spawnPath(id, ctx, port);
  await untilToolsList(proc, pathUrl(port), 30_000);
  await assertLoopbackOnly(proc);
  const frontsSharedEcho = id === 'passthrough' || id === 'mcp-relay' || id === 'portcullis-http' || id === 'portcullis-http-2026';
  const serverRoots = frontsSharedEcho && ctx.upstreamPid !== undefined ? [proc.pid, ctx.upstreamPid] : [proc.pid];
  return { id, url: pathUrl(port), process: proc, serverRoots };
}

/** Stops the bench if a process listens anywhere but loopback (read from /proc, not trusted). */
export async function assertLoopbackOnly(proc: TrackedProcess): Promise<void> {
  const addresses = listeningAddresses(proc.pid);
  if (addresses.length === 0 || allLoopback(addresses)) return;
  await proc.stop();
  throw new Error(`${proc.name} listened on a non-loopback address (${addresses.join(', ')}); stopped it`);
}
