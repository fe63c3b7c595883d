/**
 * `npm run bench`: Portcullis side by side with a direct connection and the popular npm MCP
 * proxies, all on 127.0.0.1. Prints the tables and writes bench/results/run-<time>.{json,md}
 * and bench/results/latest.md. Method: docs/performance.md.
 *
 *   node dist/bench/run.js [--duration S] [--rounds N] [--concurrency 1,16,64]
 *                          [--paths direct,portcullis-http,…] [--sessions N] [--wait-quiet S]
 *                          [--pin pinned,unpinned] [--phases search,integrity,cold,load,gateway] [--quick] [--keep-logs]
 *
 * Every process it starts is stopped by pid at the end, on failure, on SIGINT/SIGTERM, and by a
 * watchdog if the run overstays its estimate by half plus two minutes.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderReport, type RunReport } from './lib/report.js';
import { waitForQuiet } from './lib/cpu-noise.js';
import { killAllNow, ownPids, stopAll } from './lib/processes.js';
import { ensureRivals, rivalVersion, type RivalPackage } from './lib/rivals.js';
import { median } from './lib/stats.js';
import { judgeTargets, loadRowsByMode } from './lib/summary.js';
import { canPin, type PinMode } from './lib/affinity.js';
import { KNOWN_PATH_IDS, PATH_IDS, startEchoHttp, type BenchContext, type PathId } from './paths.js';
import { coldStart, stdioEchoColdStart } from './phases/cold-start.js';
import { runLoadPhase } from './phases/load.js';
import { runIntegrityPhase } from './phases/integrity.js';
import { runSearchPhase } from './phases/search.js';
import { measureIdleRss, measureSessionMemory, measureToolsList } from './phases/portcullis-extras.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = join(ROOT, 'bench/results');

type Phase = 'search' | 'integrity' | 'cold' | 'load' | 'gateway';
const PHASES: readonly Phase[] = ['search', 'integrity', 'cold', 'load', 'gateway'];

interface Plan {
  durationS: number;
  rounds: number;
  concurrencies: number[];
  paths: PathId[];
  sessions: number;
  coldStarts: number;
  listDurationS: number;
  warmupS: number;
  keepLogs: boolean;
  quick: boolean;
  /** Longest wait, in seconds, for other processes to leave the CPU before starting. */
  waitQuietS: number;
  /** Pin modes of the load rounds. */
  modes: PinMode[];
  /** Phases to run (default all): `search`, `integrity` (the scanner on real servers), `cold`, `load`, `gateway` (tools/list and memory). */
  phases: ReadonlySet<Phase>;
}

function readPlan(argv: string[]): Plan {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      rounds: { type: 'string' },
      concurrency: { type: 'string' },
      paths: { type: 'string' },
      sessions: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'keep-logs': { type: 'boolean', default: false },
      'wait-quiet': { type: 'string' },
      pin: { type: 'string' },
      phases: { type: 'string' },
    },
  });
  const int = (text: string | undefined, fallback: number, min: number, max: number, name: string): number => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min || value > max) throw new TypeError(`--${name} must be an integer from ${min} to ${max}`);
    return value;
  };
  const quick = values.quick === true;
  const concurrencies = (values.concurrency ?? '16,64').split(',').map((c) => int(c, 0, 1, 256, 'concurrency'));
  const paths = (values.paths ?? PATH_IDS.join(',')).split(',') as PathId[];
  for (const path of paths) if (!KNOWN_PATH_IDS.includes(path)) throw new TypeError(`--paths: unknown path "${path}" (known: ${KNOWN_PATH_IDS.join(', ')})`);
  if (!paths.includes('direct')) paths.unshift('direct');
  const modes = (values.pin ?? 'pinned,unpinned').split(',') as PinMode[];
  for (const mode of modes) if (mode !== 'pinned' && mode !== 'unpinned') throw new TypeError(`--pin: unknown mode "${mode}" (known: pinned, unpinned)`);
  return {
    modes,
    phases: readPhases(values.phases),
    durationS: int(values.duration, quick ? 2 : 5, 1, 60, 'duration'),
    rounds: int(values.rounds, quick ? 1 : 3, 1, 10, 'rounds'),
    concurrencies,
    paths,
    // 1000 is the default policy's session ceiling (policy limits.maxSessions).
    sessions: int(values.sessions, quick ? 200 : 1000, 10, 1000, 'sessions'),
    coldStarts: quick ? 1 : 3,
    listDurationS: quick ? 1 : 2,
    warmupS: quick ? 1 : 2,
    keepLogs: values['keep-logs'] === true,
    quick,
    waitQuietS: int(values['wait-quiet'], quick ? 0 : 30, 0, 600, 'wait-quiet'),
  };
}

function readPhases(text: string | undefined): ReadonlySet<Phase> {
  const phases = (text ?? PHASES.join(',')).split(',') as Phase[];
  for (const phase of phases) if (!PHASES.includes(phase)) throw new TypeError(`--phases: unknown phase "${phase}" (known: ${PHASES.join(', ')})`);
  return new Set(phases);
}

function readOnlyGit(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

function versionOf(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Rough wall time of a plan, from measured runs on a 2-core machine (about 870 s for the default; the search phase's cross-validation is most of it). */
function estimateSeconds(plan: Plan): number {
  const cold = plan.phases.has('cold') ? plan.coldStarts * (plan.paths.length + 1) * 1.5 : 0;
  const load = !plan.phases.has('load') ? 0 : plan.paths.length * (plan.warmupS + 2) + plan.rounds * plan.modes.length * plan.concurrencies.length * plan.paths.length * (plan.durationS + 0.3);
  const lists = !plan.phases.has('gateway') ? 0 : 2 * (5 + (plan.rounds + 1) * 2 * plan.listDurationS);
  const sessions = !plan.phases.has('gateway') ? 0 : 2 * (5 + plan.sessions / 50);
  const search = !plan.phases.has('search') ? 0 : plan.quick ? 15 : 600;
  const integrity = plan.phases.has('integrity') ? 10 : 0;
  return Math.round(plan.waitQuietS + cold + load + lists + sessions + search + integrity + 5);
}

function foreignSummary(results: readonly { foreignCpu: number }[]): string {
  const shares = results.map((r) => r.foreignCpu);
  if (shares.length === 0) return 'n/a';
  const pctOf = (x: number) => `${(x * 100).toFixed(0)}%`;
  const worst = Math.max(...shares);
  return `median ${pctOf(median(shares))}, worst round ${pctOf(worst)}${worst > 0.1 ? ' (a busy machine: absolute figures are low; interleaving spreads the noise across paths)' : ''}`;
}

/** Where the running bench keeps process logs (reported when it is interrupted). */
let liveLogDir: string | undefined;

const log = (text: string) => process.stderr.write(`[bench] ${text}\n`);

/** Runs an optional phase; a failure is reported in the results instead of discarding the run. */
async function attempt<T>(problems: string[], name: string, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n', 1)[0]! : String(error);
    problems.push(`${name}: ${reason}`);
    log(`${name} failed: ${reason}`);
    return undefined;
  }
}

async function coldStartPhase(ctx: BenchContext, plan: Plan, problems: string[]) {
  const results: RunReport['coldStart'] = {};
  const stdioEchoAloneMs: number[] = [];
  for (let rep = 0; rep < plan.coldStarts; rep++) {
    const alone = await attempt(problems, 'cold start of the stdio echo alone', () => stdioEchoColdStart(ctx));
    if (alone !== undefined) stdioEchoAloneMs.push(alone);
    for (const id of plan.paths) {
      const sample = await attempt(problems, `cold start of ${id}`, () => coldStart(id, ctx));
      if (sample === undefined) continue;
      const entry = (results[id] ??= { toolsListMs: [], readyMs: [], readyAfterUpstreamMs: [] });
      entry.toolsListMs.push(sample.toolsListMs);
      if (sample.readyMs !== undefined) entry.readyMs.push(sample.readyMs);
      if (sample.readyAfterUpstreamMs !== undefined) entry.readyAfterUpstreamMs.push(sample.readyAfterUpstreamMs);
    }
  }
  return { results, stdioEchoAloneMs };
}

async function gatewayPhase(ctx: BenchContext, plan: Plan, problems: string[]) {
  const toolsList: RunReport['toolsList'] = [];
  for (const isolation of ['session', 'shared'] as const) {
    log(`Portcullis: tools/list across 20 upstreams, isolation "${isolation}"`);
    const list = await attempt(problems, `tools/list across 20 upstreams (${isolation})`, () =>
      measureToolsList(ctx, { upstreams: 20, rounds: plan.rounds, durationS: plan.listDurationS, isolation }),
    );
    if (list === undefined) continue;
    toolsList.push({
      upstreams: list.upstreams,
      isolation,
      gatewayP50: median(list.gateway.map((r) => r.p50)),
      gatewayP99: median(list.gateway.map((r) => r.p99)),
      directP50: median(list.direct.map((r) => r.p50)),
      directP99: median(list.direct.map((r) => r.p99)),
      readyAfterUpstreamMs: list.readyAfterUpstreamMs,
      idleRss: list.idleRss,
    });
  }
  log('Portcullis: idle RSS and memory per idle session');
  const idleRss = await attempt(problems, 'idle RSS', () => measureIdleRss(ctx));
  const sessionMemory: RunReport['sessionMemory'] = [];
  for (const isolation of ['shared', 'session', 'principal'] as const) {
    const memory = await attempt(problems, `memory per idle session (${isolation})`, () =>
      measureSessionMemory(ctx, { isolation, sessions: plan.sessions }),
    );
    if (memory !== undefined) sessionMemory.push(memory);
  }
  return { toolsList, idleRss, sessionMemory };
}

async function main(): Promise<number> {
  const plan = readPlan(process.argv.slice(2));
  if (process.platform !== 'linux') throw new Error('the bench reads /proc: Linux only');
  const logDir = mkdtempSync(join(tmpdir(), 'portcullis-bench-'));
  liveLogDir = logDir;
  mkdirSync(RESULTS, { recursive: true });
  if (plan.modes.includes('pinned') && !canPin()) {
    log('pinning needs two CPUs and taskset: running unpinned only');
    plan.modes = plan.modes.filter((m) => m !== 'pinned');
    if (plan.modes.length === 0) plan.modes = ['unpinned'];
  }
  ensureRivals(plan.paths.filter((path): path is RivalPackage => path === 'mcp-proxy' || path === 'supergateway'));
  log(`plan: ${plan.paths.join(', ')}; c=${plan.concurrencies.join('/')}; ${plan.modes.join(' + ')}; ${plan.rounds} round(s) × ${plan.durationS} s; about ${estimateSeconds(plan)} s in all`);
  if (plan.waitQuietS > 0) {
    log(`waiting up to ${plan.waitQuietS} s for other processes to use < 10% of the CPU`);
    const share = await waitForQuiet(ownPids, 0.1, plan.waitQuietS * 1000);
    log(`other processes: ${(share * 100).toFixed(0)}% of the CPU; starting`);
  }
  const started = Date.now();
  const watchdogS = Math.round(estimateSeconds(plan) * 1.5 + 120);
  const watchdog = setTimeout(() => {
    log(`still running after ${watchdogS} s: stopping every process the bench started`);
    killAllNow();
    process.exit(2);
  }, watchdogS * 1000);
  watchdog.unref();
  const problems: string[] = [];
  let keepLogs = plan.keepLogs;
  try {
    log('tool search: recall per evaluation set (cross-validated), latency, builds and memory at ~5,000 tools');
    const search = !plan.phases.has('search') ? undefined : await attempt(problems, 'tool search', () => runSearchPhase({ quick: plan.quick }));
    log('tool integrity: the scanner\'s false positives on the recorded real servers');
    const integrity = !plan.phases.has('integrity') ? undefined : await attempt(problems, 'tool integrity', () => runIntegrityPhase({ quick: plan.quick }));
    const extraText = [search?.text, integrity?.text].filter((t) => t !== undefined).map((t) => `\n${t}`).join('\n');
    const extraMarkdown = [search?.markdown, integrity?.markdown].filter((t) => t !== undefined).map((t) => `\n${t}`).join('\n');

    const upstream = await startEchoHttp({ logDir, upstreamUrl: '' }, 0);
    const ctx: BenchContext = { logDir, upstreamUrl: upstream.url, upstreamPid: upstream.process.pid };

    log('cold starts');
    const cold = plan.phases.has('cold') ? await coldStartPhase(ctx, plan, problems) : { results: {}, stdioEchoAloneMs: [] };

    log('tools/call load');
    const load = !plan.phases.has('load') ? { rounds: {}, peakRss: {}, idleRss: {} } : await runLoadPhase(ctx, {
      paths: plan.paths,
      concurrencies: plan.concurrencies,
      rounds: plan.rounds,
      durationS: plan.durationS,
      warmupS: plan.warmupS,
      modes: plan.modes,
      onRound: (round, c, path, mode) => log(`  round ${round}/${plan.rounds}  ${mode}  c=${c}  ${path}`),
    });
    const rows = loadRowsByMode(load.rounds);

    const wantsGateway = plan.phases.has('gateway') && plan.paths.some((p) => p.startsWith('portcullis'));
    const gateway = wantsGateway ? await gatewayPhase(ctx, plan, problems) : { toolsList: [], idleRss: undefined, sessionMemory: [] };

    const readyAfterUpstream = [
      ...['portcullis-http', 'portcullis-stdio'].flatMap((id) => {
        const values = cold.results[id]?.readyAfterUpstreamMs ?? [];
        return values.length === 0 ? [] : [median(values)];
      }),
      ...gateway.toolsList.flatMap((l) => (l.readyAfterUpstreamMs === undefined ? [] : [l.readyAfterUpstreamMs])),
    ];
    // The tools/list target is judged on the default configuration (isolation "session").
    const headlineList = gateway.toolsList.find((l) => l.isolation === 'session');
    const report: RunReport = {
      meta: {
        date: new Date(started).toISOString(),
        'wall time': `${Math.round((Date.now() - started) / 1000)} s`,
        machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
        node: process.version,
        commit: `${readOnlyGit(['rev-parse', '--short', 'HEAD'])}${readOnlyGit(['status', '--porcelain', '--', 'src']) === '' ? '' : ' (src/ has uncommitted changes)'}`,
        plan: `c=${plan.concurrencies.join('/')}, ${plan.modes.join(' + ')}, ${plan.rounds} round(s) × ${plan.durationS} s per path, mode and c, interleaved`,
        'CPU taken by other processes during load rounds': foreignSummary(
          Object.values(load.rounds).flatMap((byPath) => Object.values(byPath ?? {}).flatMap((byC) => Object.values(byC).flat())),
        ),
        versions: `mcp-proxy ${rivalVersion('mcp-proxy')}, supergateway ${rivalVersion('supergateway')}, autocannon ${versionOf('autocannon')}, @modelcontextprotocol/server ${versionOf('@modelcontextprotocol/server')}`,
        ...(problems.length === 0 ? {} : { problems: problems.join('; ') }),
      },
      rows,
      peakRss: load.peakRss,
      idleRssByPath: load.idleRss,
      coldStart: cold.results,
      stdioEchoAloneMs: cold.stdioEchoAloneMs,
      toolsList: gateway.toolsList,
      idleRss: gateway.idleRss,
      sessionMemory: gateway.sessionMemory,
      targets: judgeTargets({
        rows,
        concurrencies: plan.concurrencies,
        toolsListP99: headlineList === undefined ? undefined : { gateway: headlineList.gatewayP99, direct: headlineList.directP99 },
        idleRssByPath: load.idleRss,
        perSessionHeap: gateway.sessionMemory.find((m) => m.isolation === 'shared')?.perSessionHeap,
        readyAfterUpstream,
        coldStartMs:
          cold.results['portcullis-stdio'] === undefined || cold.results['mcp-proxy'] === undefined
            ? undefined
            : { portcullisStdio: median(cold.results['portcullis-stdio'].toolsListMs), mcpProxy: median(cold.results['mcp-proxy'].toolsListMs) },
      }).concat(search?.targets ?? [], integrity?.targets ?? []),
    };
    const stamp = new Date(started).toISOString().replace(/[:.]/g, '-');
    const markdown = `${renderReport(report, 'markdown')}${extraMarkdown}`;
    writeFileSync(join(RESULTS, `run-${stamp}.json`), `${JSON.stringify({ report, raw: { load: load.rounds, search: search?.report, integrity: integrity?.report } }, null, 2)}\n`);
    writeFileSync(join(RESULTS, `run-${stamp}.md`), `${markdown}\n`);
    writeFileSync(join(RESULTS, 'latest.md'), `${markdown}\n`);
    process.stdout.write(`${renderReport(report, 'text')}${extraText}\n\nwritten: bench/results/run-${stamp}.{json,md}, bench/results/latest.md\n`);
    if (problems.length > 0) keepLogs = true;
    return problems.length === 0 ? 0 : 1;
  } catch (error) {
    keepLogs = true;
    throw error;
  } finally {
    await stopAll();
    if (keepLogs) log(`logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

process.on('exit', killAllNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping every process the bench started${liveLogDir === undefined ? '' : `; logs kept in ${liveLogDir}`}`);
    killAllNow();
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
