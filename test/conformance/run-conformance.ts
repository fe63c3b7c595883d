/**
 * Runs the official MCP conformance suites (0.1.16 default spec; 0.2 at 2025-11-25 and 2026-07-28,
 * active suite) and prints one summary table.
 *
 *   node dist/test/conformance/run-conformance.js            through the gateway (default)
 *   node dist/test/conformance/run-conformance.js --direct   against the fixture itself (sanity check)
 *   add --verbose to stream the suites' own output
 *
 * Gateway mode starts the HTTP fixture, then `dist/src/main.js` with a temporary config fronting the
 * fixture twice (stdio child and Streamable HTTP), and runs every suite against the per-server side
 * channels `/mcp/servers/fx_stdio` and `/mcp/servers/fx_http`, where names are not namespaced.
 * Every process started here is killed by pid on exit, failure or signal; every wait has a deadline.
 * Results go to `conformance-results/` (gitignored). Exits non-zero when any run fails beyond its
 * expected-failures baseline (`test/conformance/expected-failures-*.yml`).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnUntilReady, type ReadyProcess } from '../fixtures/spawn-until-ready.js';
import { findRepoRoot, loaderArgs, suiteEntry, SUITES } from './conformance-suites.js';
import { runSuite, type SuiteRunResult } from './run-suite.js';

interface Target {
  name: string;
  url: string;
  /** Suite ids to run against it; all when absent. */
  suites?: readonly string[];
}

const READY_TIMEOUT_MS = 30_000;
const SUITE_TIMEOUT_MS = 15 * 60_000;

const started: ReadyProcess[] = [];
const suiteChildren = new Set<ChildProcess>();
const tempDirs: string[] = [];

async function cleanup(): Promise<void> {
  for (const child of suiteChildren) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  // Gateway first (it owns a fixture child of its own), then the HTTP fixture.
  for (const proc of [...started].reverse()) await proc.stop().catch(() => undefined);
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

function parseArgs(argv: readonly string[]): { direct: boolean; verbose: boolean } {
  const known = new Set(['--direct', '--verbose']);
  const unknown = argv.filter((arg) => !known.has(arg));
  if (unknown.length > 0) throw new Error(`unknown argument ${unknown[0] ?? ''}; usage: run-conformance [--direct] [--verbose]`);
  return { direct: argv.includes('--direct'), verbose: argv.includes('--verbose') };
}

async function startFixture(root: string): Promise<string> {
  const fixture = await spawnUntilReady(
    process.execPath,
    [join(root, 'dist/test/fixtures/conformance-server.js'), '--http'],
    { label: 'fixture', ready: /^FIXTURE_READY (http:\/\/127\.0\.0\.1:\d+\/mcp)$/, timeoutMs: READY_TIMEOUT_MS },
  );
  started.push(fixture);
  return fixture.match;
}

async function startGateway(root: string, fixtureUrl: string, eventStore: Record<string, unknown> = {}): Promise<string> {
  const cli = join(root, 'dist/src/main.js');
  if (!existsSync(cli)) throw new Error('the gateway CLI (dist/src/main.js) is not built; run `npm run build`, or use --direct');
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-conformance-'));
  tempDirs.push(dir);
  const configPath = join(dir, 'gateway.json');
  const config = {
    listen: { host: '127.0.0.1', port: 0, path: '/mcp' },
    // Polling on (SEP-1699): long calls' SSE streams are closed early and resumed by the suites'
    // clients with Last-Event-ID, so every scenario also proves resumption loses nothing.
    eventStore: { kind: 'memory', pollAfterMs: 150, ...eventStore },
    servers: {
      fx_stdio: {
        transport: 'stdio',
        command: process.execPath,
        args: [join(root, 'dist/test/fixtures/conformance-server.js'), '--stdio'],
      },
      // The fixture listens on loopback, which the egress guard blocks unless explicitly allowed (DESIGN.md §7).
      fx_http: { transport: 'streamableHttp', url: fixtureUrl, allowPrivateNetwork: true },
    },
  };
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  const lines: string[] = [];
  try {
    const gateway = await spawnUntilReady(process.execPath, [cli, '--config', configPath, '--port', '0'], {
      label: 'gateway',
      ready: /^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:\d+\/mcp)$/,
      timeoutMs: READY_TIMEOUT_MS,
      cwd: root,
      onLine: (line) => {
        if (lines.length < 40) lines.push(line);
      },
    });
    started.push(gateway);
    return gateway.match;
  } catch (error) {
    const tail = lines.length > 0 ? `\n--- gateway output ---\n${lines.join('\n')}` : '';
    throw new Error(`${error instanceof Error ? error.message : String(error)}${tail}`);
  }
}

function printTable(results: readonly SuiteRunResult[]): void {
  const rows = [
    ['suite', 'target', 'passed', 'failed', 'result'],
    ...results.map((r) => [
      r.suite,
      r.target,
      String(r.passed ?? '-'),
      String(r.failed ?? '-'),
      r.ok ? (r.failed ? 'ok (expected failures)' : 'ok') : `FAIL: ${r.note ?? ''}`,
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  for (const [index, row] of rows.entries()) {
    console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd());
    if (index === 0) console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  }
}

async function main(): Promise<number> {
  const { direct, verbose } = parseArgs(process.argv.slice(2));
  const root = findRepoRoot();
  const nodeArgs = loaderArgs(root);
  const entries = new Map(SUITES.map((suite) => [suite.packageName, suiteEntry(suite.packageName)]));
  if (!existsSync(join(root, 'dist/test/fixtures/conformance-server.js'))) {
    throw new Error('the fixture is not built (dist/test/fixtures/conformance-server.js); run `npm run build`');
  }

  const runDir = join(root, 'conformance-results', `${direct ? 'direct' : 'gateway'}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(runDir, { recursive: true });

  const fixtureUrl = await startFixture(root);
  let targets: Target[];
  if (direct) {
    targets = [{ name: 'fixture-http', url: fixtureUrl }];
  } else {
    const gatewayUrl = await startGateway(root, fixtureUrl);
    targets = ['fx_stdio', 'fx_http'].map((name) => ({ name: `gateway/${name}`, url: `${gatewayUrl}/servers/${name}` }));
    // By default a quick 2025-era call is answered with one JSON body; this gateway streams every
    // call (streamAfterMs 0), so the suites' SSE-only checks run against the SSE path too.
    const streamingUrl = await startGateway(root, fixtureUrl, { streamAfterMs: 0 });
    targets.push({ name: 'gateway-sse/fx_stdio', url: `${streamingUrl}/servers/fx_stdio`, suites: ['0.1.16', '0.2/2025-11-25'] });
  }

  const results: SuiteRunResult[] = [];
  for (const target of targets) {
    for (const suite of SUITES) {
      if (target.suites !== undefined && !target.suites.includes(suite.id)) continue;
      console.log(`running ${suite.id} against ${target.name} …`);
      const result = await runSuite({
        suite,
        target: target.name,
        url: target.url,
        entry: entries.get(suite.packageName) ?? '',
        nodeArgs,
        outputDir: join(runDir, `${target.name}--${suite.id}`.replace(/[^A-Za-z0-9._-]+/g, '_')),
        baselineDir: join(root, 'test/conformance'),
        timeoutMs: SUITE_TIMEOUT_MS,
        verbose,
        onSpawn: (child) => {
          suiteChildren.add(child);
          child.once('close', () => suiteChildren.delete(child));
        },
      });
      results.push(result);
    }
  }

  console.log('');
  printTable(results);
  writeFileSync(join(runDir, 'summary.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults: ${runDir}`);
  // A plain closing line, so whoever reads the end of the log sees the totals at once.
  const passed = results.reduce((sum, r) => sum + (r.passed ?? 0), 0);
  const failed = results.reduce((sum, r) => sum + (r.failed ?? 0), 0);
  console.log(`conformance: ${passed} passed, ${failed} failed`);
  return results.every((result) => result.ok) ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanup().finally(() => process.exit(130));
  });
}

main()
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  })
  .catch(async (error: unknown) => {
    console.error(`conformance run failed: ${error instanceof Error ? error.message : String(error)}`);
    await cleanup();
    process.exit(1);
  });
