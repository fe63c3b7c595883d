/**
 * Portcullis-only figures:
 * - `tools/list` latency through a gateway fronting 20 upstreams (served from the catalogue
 *   cache once warm) against `tools/list` sent straight to one upstream, c=1, interleaved rounds;
 *   with the default `isolation: "session"` (the session's own 2025-era links) and with
 *   `"shared"` (the primaries, which negotiate 2026 with an SDK v2 upstream);
 * - idle RSS of a freshly started gateway, and memory per idle 2025-era session: RSS with N
 *   initialized sessions open minus RSS before, over N (sessions closed afterwards), read as the
 *   kernel reports it and again after forced full GCs (the gc-probe preload), with the retained
 *   JS heap. Measured with `isolation: "shared"` (the session alone), `"session"` (the session
 *   plus its own upstream connection, HTTP) and the default `"principal"`; and, for the
 *   many-sessions target of issue 22 (bench/idle-sessions.ts), with sessions that each called a
 *   tool of one stdio server and never sent DELETE, the child processes it cost counted.
 */
import { readFileSync } from 'node:fs';
import { isSuccessBody, runLoad, type LoadResult } from '../lib/load.js';
import { closeSession, openSession, rpc, toolsListBody, type McpSession } from '../lib/mcp-session.js';
import { descendantsOf, memoryOf } from '../lib/proc.js';
import type { TrackedProcess } from '../lib/processes.js';
import { gatewayConfig, httpEcho, SCRIPTS, startGateway, stdioEcho, type BenchContext, type ServerEntries } from '../paths.js';
import { upstreamReadyTimes } from './cold-start.js';

export interface ToolsListResult {
  upstreams: number;
  isolation: 'shared' | 'session';
  gateway: LoadResult[];
  direct: LoadResult[];
  /** Ready line − last `upstream ready` log line with this many upstreams, ms. */
  readyAfterUpstreamMs: number | undefined;
  /** RSS after start, before any session, bytes. */
  idleRss: number;
}

export type Isolation = 'shared' | 'session' | 'principal';

export interface SessionMemoryOptions {
  isolation: Isolation;
  sessions: number;
  /** The one upstream: the shared HTTP echo (default) or a stdio echo of the gateway's own. */
  upstream?: 'http' | 'stdio';
  /** Each session calls the echo tool once after initialising (and, like every session here, sends no DELETE until measured). */
  call?: boolean;
}

export interface SessionMemoryResult {
  isolation: Isolation;
  upstream: 'http' | 'stdio';
  /** Each session called a tool once. */
  called: boolean;
  sessions: number;
  /** Processes the gateway had started (its stdio children) with the sessions open. */
  children: number;
  /** RSS before and with the sessions open, as the kernel reports it (garbage included). */
  idleRss: number;
  rssWithSessions: number;
  /** (rssWithSessions − idleRss) / sessions, bytes. */
  perSessionRss: number;
  /** After two forced full GCs: what the sessions retain. */
  gcRssBefore: number;
  gcRssWith: number;
  perSession: number;
  /** JS heap retained per session after full GCs, bytes. */
  perSessionHeap: number;
  /** Memory outside the JS heap (buffers, native objects) per session after full GCs, bytes. */
  perSessionExternal: number;
}

interface GcProbe {
  rss: number;
  heapUsed: number;
  external: number;
  gc: boolean;
}

/** Asks a process started with the gc-probe preload for its memory after full GCs. */
async function probeMemory(proc: TrackedProcess): Promise<GcProbe> {
  const seen = readFileSync(proc.logFile, 'utf8').split('GC_PROBE ').length;
  process.kill(proc.pid, 'SIGUSR2');
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    await settle(50);
    const parts = readFileSync(proc.logFile, 'utf8').split('GC_PROBE ');
    if (parts.length > seen) {
      const probe = JSON.parse(parts[parts.length - 1]!.split('\n', 1)[0]!) as GcProbe;
      if (!probe.gc) throw new Error('the gateway was not started with --expose-gc');
      return probe;
    }
  }
  throw new Error(`${proc.name} did not answer the memory probe`);
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn` over `items` with at most `limit` in flight. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function measureToolsList(
  ctx: BenchContext,
  options: { upstreams: number; rounds: number; durationS: number; isolation: 'shared' | 'session' },
): Promise<ToolsListResult> {
  const servers: ServerEntries = {};
  for (let i = 1; i <= options.upstreams; i++) {
    servers[`echo${String(i).padStart(2, '0')}`] = httpEcho(ctx.upstreamUrl, { isolation: options.isolation });
  }
  const gateway = await startGateway(ctx, `portcullis-${options.upstreams}-${options.isolation}`, gatewayConfig(0, servers));
  const sessions: McpSession[] = [];
  try {
    await settle(500);
    const idleRss = memoryOf(gateway.process.pid)?.rss ?? Number.NaN;
    const upstream = upstreamReadyTimes(readFileSync(gateway.process.logFile, 'utf8'));
    const viaGateway = await openSession(gateway.url);
    const direct = await openSession(ctx.upstreamUrl);
    sessions.push(viaGateway, direct);
    const listed = await rpc(viaGateway, 'tools/list');
    if (!Array.isArray(listed.tools) || listed.tools.length !== options.upstreams) {
      throw new Error(`gateway listed ${Array.isArray(listed.tools) ? listed.tools.length : 'no'} tools, expected ${options.upstreams}`);
    }
    const run = (session: McpSession, url: string) =>
      runLoad({ url, headers: session.headers, body: toolsListBody(), connections: 1, durationS: options.durationS, verify: isSuccessBody });
    await run(viaGateway, gateway.url); // warm-up, discarded
    await run(direct, ctx.upstreamUrl);
    const result: ToolsListResult = {
      upstreams: options.upstreams,
      isolation: options.isolation,
      gateway: [],
      direct: [],
      readyAfterUpstreamMs: upstream.length === 0 ? undefined : gateway.readyEpoch - Math.max(...upstream),
      idleRss,
    };
    for (let round = 0; round < options.rounds; round++) {
      result.direct.push(await run(direct, ctx.upstreamUrl));
      result.gateway.push(await run(viaGateway, gateway.url));
    }
    return result;
  } finally {
    for (const session of sessions) await closeSession(session);
    await gateway.process.stop();
  }
}

export async function measureSessionMemory(ctx: BenchContext, options: SessionMemoryOptions): Promise<SessionMemoryResult> {
  const upstream = options.upstream ?? 'http';
  const called = options.call === true;
  // Default session settings: sessions.max is 1000, which the default policy will not let a config raise.
  const echo = upstream === 'http' ? httpEcho(ctx.upstreamUrl, { isolation: options.isolation }) : stdioEcho({ isolation: options.isolation });
  const config = gatewayConfig(0, { echo });
  const probed: BenchContext = { ...ctx, gatewayNodeFlags: [...(ctx.gatewayNodeFlags ?? []), '--expose-gc', '--import', SCRIPTS.gcProbePreload] };
  const gateway = await startGateway(probed, `portcullis-sessions-${options.isolation}-${upstream}${called ? '-called' : ''}`, config);
  const call = async (session: McpSession) => {
    if (called) await rpc(session, 'tools/call', { name: 'echo__echo', arguments: { text: 'hello' } });
  };
  const opened: McpSession[] = [];
  try {
    // One session first, closed again: the code paths a session touches are loaded and compiled
    // before the baseline, so the delta is sessions, not first-use costs.
    const first = await openSession(gateway.url);
    await rpc(first, 'tools/list');
    await call(first);
    await closeSession(first);
    await settle(1_000);
    const idleRss = memoryOf(gateway.process.pid)?.rss ?? Number.NaN;
    const before = await probeMemory(gateway.process);
    const slots = Array.from({ length: options.sessions }, (_, i) => i);
    await eachLimited(slots, 8, async () => {
      const session = await openSession(gateway.url);
      opened.push(session);
      await call(session);
    });
    await settle(1_000);
    const rssWithSessions = memoryOf(gateway.process.pid)?.rss ?? Number.NaN;
    const withSessions = await probeMemory(gateway.process);
    return {
      isolation: options.isolation,
      upstream,
      called,
      sessions: options.sessions,
      children: descendantsOf(gateway.process.pid).length,
      idleRss,
      rssWithSessions,
      perSessionRss: (rssWithSessions - idleRss) / options.sessions,
      gcRssBefore: before.rss,
      gcRssWith: withSessions.rss,
      perSession: (withSessions.rss - before.rss) / options.sessions,
      perSessionHeap: (withSessions.heapUsed - before.heapUsed) / options.sessions,
      perSessionExternal: (withSessions.external - before.external) / options.sessions,
    };
  } finally {
    await eachLimited(opened, 8, closeSession);
    await gateway.process.stop();
  }
}

/** RSS of a freshly started default-config gateway (one HTTP upstream), after it settles. */
export async function measureIdleRss(ctx: BenchContext): Promise<number> {
  const gateway = await startGateway(ctx, 'portcullis-idle', gatewayConfig(0, { echo: httpEcho(ctx.upstreamUrl) }));
  try {
    await settle(1_000);
    return memoryOf(gateway.process.pid)?.rss ?? Number.NaN;
  } finally {
    await gateway.process.stop();
  }
}
