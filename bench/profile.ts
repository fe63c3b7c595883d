/**
 * CPU profile of the Portcullis hot path: starts the gateway under `node --cpu-prof`, drives
 * `tools/call` (or `tools/list` across 20 upstreams) at a fixed concurrency, stops it cleanly so
 * the profile is written, and prints where the CPU went (self time by function and by package,
 * inclusive time of the heaviest frames), source-mapped to `.ts` files. The `.cpuprofile` files
 * stay in bench/results/profiles/ (open them in Chrome DevTools or speedscope for flame graphs).
 *
 *   npm run build && node dist/bench/profile.js [--duration S] [--connections N] [--what http,stdio,list] [--era 2025|2026]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { summariseProfile, type CpuProfile, type ProfileSummary } from './lib/cpu-profile.js';
import { isSuccessBody, runLoad, type LoadResult } from './lib/load.js';
import { closeSession, echoCallBody, openSession, requestHeaders, rpc, toolsListBody } from './lib/mcp-session.js';
import { killAllNow, stopAll } from './lib/processes.js';
import { renderTable } from './lib/table.js';
import { gatewayConfig, httpEcho, startEchoHttp, startGateway, stdioEcho, type BenchContext, type ServerEntries } from './paths.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'bench/results/profiles');

type What = 'http' | 'stdio' | 'list';

function servers(what: What, upstreamUrl: string): ServerEntries {
  if (what === 'http') return { echo: httpEcho(upstreamUrl) };
  if (what === 'stdio') return { echo: stdioEcho() };
  const many: ServerEntries = {};
  for (let i = 1; i <= 20; i++) many[`echo${String(i).padStart(2, '0')}`] = httpEcho(upstreamUrl, { isolation: 'shared' });
  return many;
}

async function profileOne(ctx: BenchContext, what: What, connections: number, durationS: number, era: '2025' | '2026'): Promise<{ summary: ProfileSummary; load: LoadResult; file: string }> {
  const name = era === '2025' ? `portcullis-${what}` : `portcullis-${what}-${era}`;
  const profiled: BenchContext = { ...ctx, gatewayNodeFlags: ['--cpu-prof', '--cpu-prof-dir', OUT, '--cpu-prof-name', `${name}.cpuprofile`] };
  const gateway = await startGateway(profiled, name, gatewayConfig(0, servers(what, ctx.upstreamUrl)));
  let load: LoadResult;
  let window: { fromMs: number; toMs: number };
  try {
    const session = await openSession(gateway.url, undefined, era);
    await rpc(session, what === 'list' ? 'tools/list' : 'tools/call', what === 'list' ? {} : { name: 'echo__echo', arguments: { text: 'warm' } });
    if (what === 'list' && era === '2026') throw new TypeError('--era 2026 profiles tools/call only');
    const options = {
      url: gateway.url,
      headers: requestHeaders(session, what === 'list' ? 'tools/list' : 'tools/call', what === 'list' ? {} : { name: 'echo__echo' }),
      body: what === 'list' ? toolsListBody() : echoCallBody('echo__echo', era),
      connections,
      durationS,
      verify: isSuccessBody,
    };
    await runLoad({ ...options, durationS: 1 });
    const from = performance.now() - gateway.process.spawnedAt;
    load = await runLoad(options);
    window = { fromMs: from, toMs: performance.now() - gateway.process.spawnedAt };
    await closeSession(session);
  } finally {
    await gateway.process.stop();
  }
  const file = join(OUT, `${name}.cpuprofile`);
  // The measured window, so the profile can be summarised again later without start-up noise.
  writeFileSync(join(OUT, `${name}.window.json`), `${JSON.stringify({ ...window, load })}\n`);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  return { summary: summariseProfile(profile, ROOT, window), load, file };
}

function render(what: What, connections: number, result: { summary: ProfileSummary; load: LoadResult; file: string }): string {
  const { summary, load } = result;
  const busy = summary.totalMs - summary.idleMs;
  const share = (ms: number) => `${((ms / busy) * 100).toFixed(1)}%`;
  const lines = [
    `## ${what === 'list' ? 'tools/list, 20 upstreams' : `tools/call → ${what} echo`} (c=${connections})`,
    '',
    `${load.rps.toFixed(0)} req/s, p50 ${load.p50.toFixed(2)} ms, p99 ${load.p99.toFixed(2)} ms; measured window ${(summary.totalMs / 1000).toFixed(1)} s, ` +
      `busy ${(busy / 1000).toFixed(1)} s (${((busy / summary.totalMs) * 100).toFixed(0)}%). Shares below are of busy time. ` +
      `File: ${result.file.slice(ROOT.length)}`,
    '',
    '### Self time by package / folder',
    '',
    renderTable(
      [{ title: 'group' }, { title: 'self', align: 'right' }],
      summary.groups.filter((g) => g.group !== '(idle)').slice(0, 15).map((g) => [g.group, share(g.selfMs)]),
      'markdown',
    ),
    '',
    '### Top functions by self time',
    '',
    renderTable(
      [{ title: 'function' }, { title: 'where' }, { title: 'self', align: 'right' }, { title: 'total', align: 'right' }],
      summary.functions
        .filter((f) => f.name !== '(idle)')
        .slice(0, 25)
        .map((f) => [f.name, f.location || f.group, share(f.selfMs), share(f.totalMs)]),
      'markdown',
    ),
    '',
    '### Native self time by JavaScript caller',
    '',
    renderTable(
      [{ title: 'native' }, { title: 'called from' }, { title: 'where' }, { title: 'self', align: 'right' }],
      summary.nativeCallers.slice(0, 12).map((n) => [n.native, n.caller, n.location, share(n.selfMs)]),
      'markdown',
    ),
    '',
    '### Heaviest Portcullis frames by inclusive time',
    '',
    renderTable(
      [{ title: 'function' }, { title: 'where' }, { title: 'total', align: 'right' }, { title: 'self', align: 'right' }],
      [...summary.functions]
        .filter((f) => f.location.startsWith('src/'))
        .sort((a, b) => b.totalMs - a.totalMs)
        .slice(0, 15)
        .map((f) => [f.name, f.location, share(f.totalMs), share(f.selfMs)]),
      'markdown',
    ),
    '',
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '16' },
      what: { type: 'string', default: 'http,stdio,list' },
      era: { type: 'string', default: '2025' },
    },
  });
  const durationS = Number(values.duration);
  const connections = Number(values.connections);
  if (!Number.isInteger(durationS) || durationS < 1 || durationS > 60) throw new TypeError('--duration must be 1-60');
  if (!Number.isInteger(connections) || connections < 1 || connections > 256) throw new TypeError('--connections must be 1-256');
  const whats = values.what.split(',') as What[];
  for (const w of whats) if (!['http', 'stdio', 'list'].includes(w)) throw new TypeError(`--what: unknown "${w}"`);
  const era = values.era;
  if (era !== '2025' && era !== '2026') throw new TypeError('--era must be 2025 or 2026');
  mkdirSync(OUT, { recursive: true });
  const logDir = mkdtempSync(join(tmpdir(), 'portcullis-profile-'));
  try {
    const upstream = await startEchoHttp({ logDir, upstreamUrl: '' });
    const ctx: BenchContext = { logDir, upstreamUrl: upstream.url };
    const sections: string[] = [];
    for (const what of whats) {
      const c = what === 'list' ? 1 : connections;
      process.stderr.write(`[profile] ${what} c=${c} ${durationS} s\n`);
      sections.push(render(what, c, await profileOne(ctx, what, c, durationS, era)));
    }
    const text = sections.join('\n');
    writeFileSync(join(OUT, 'summary.md'), `${text}\n`);
    process.stdout.write(`${text}\nwritten: bench/results/profiles/summary.md\n`);
  } finally {
    await stopAll();
    rmSync(logDir, { recursive: true, force: true });
  }
}

process.on('exit', killAllNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAllNow();
    process.exit(130);
  });
}
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`[profile] failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
