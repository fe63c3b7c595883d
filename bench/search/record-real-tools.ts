/**
 * One-off: records the `tools/list` (and instructions) of real MCP servers published on npm into
 * bench/search/data/real-servers.json, the real part of the search benchmark's catalogue. Not run
 * by `npm test` or `npm run bench`; run it by hand to refresh the file:
 *
 *   npm run build && node dist/bench/search/record-real-tools.js [--only name,name]
 *
 * Each package is installed at its pinned version with `--ignore-scripts` into a cache directory
 * under the system temp dir (never into this repo's node_modules), started over stdio with
 * dummy credentials and the offline preload (no connection leaves the machine), listed through
 * the SDK client, and closed. A server that does not answer in time is reported and left out.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { REAL_SERVERS, type RealServerSpec } from './real-servers.js';
import type { RecordedServer, RecordedTool } from './catalogue-types.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OUT = join(ROOT, 'bench/search/data/real-servers.json');
const PRELOAD = fileURLToPath(new URL('./offline-preload.js', import.meta.url));
const CACHE = join(tmpdir(), 'portcullis-search-servers');
const LIST_TIMEOUT_MS = 60_000;

const log = (text: string) => process.stderr.write(`[record] ${text}\n`);

function installDir(spec: RealServerSpec): string {
  return join(CACHE, `${spec.package.replace(/[@/]/g, '_')}@${spec.version}`);
}

function install(spec: RealServerSpec): string {
  const dir = installDir(spec);
  const manifest = join(dir, 'node_modules', spec.package, 'package.json');
  if (!existsSync(manifest)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
    log(`installing ${spec.package}@${spec.version}`);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', `${spec.package}@${spec.version}`], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin?: string | Record<string, string> };
  if (pkg.version !== spec.version) throw new Error(`installed ${pkg.version}, wanted ${spec.version}`);
  const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.[spec.bin ?? ''] ?? Object.values(pkg.bin ?? {})[0];
  if (bin === undefined) throw new Error('package has no bin');
  return join(dirname(manifest), bin);
}

async function record(spec: RealServerSpec): Promise<RecordedServer> {
  const entry = install(spec);
  const workdir = join(CACHE, 'workdir', spec.server);
  mkdirSync(workdir, { recursive: true });
  const args = spec.args.map((a) => a.replaceAll('{workdir}', workdir));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', pathToFileURL(PRELOAD).href, entry, ...args],
    cwd: workdir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: workdir,
      NODE_OPTIONS: `--import ${pathToFileURL(PRELOAD).href}`,
      DO_NOT_TRACK: '1',
      ...Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, v.replaceAll('{workdir}', workdir)])),
    },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'portcullis-search-recorder', version: '1.0.0' });
  const timer = setTimeout(() => void transport.close(), LIST_TIMEOUT_MS);
  try {
    await client.connect(transport);
    const tools: RecordedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      for (const t of page.tools) {
        tools.push({
          name: t.name,
          ...(t.title === undefined ? {} : { title: t.title }),
          ...(t.description === undefined ? {} : { description: t.description }),
          inputSchema: t.inputSchema as RecordedTool['inputSchema'],
        });
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < 10_000);
    const instructions = client.getInstructions();
    return {
      server: spec.server,
      source: { package: spec.package, version: spec.version },
      ...(instructions === undefined ? {} : { instructions }),
      tools,
    };
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

/** One tool per line: small diffs when a server's list changes, and no multi-megabyte line. */
function formatRecording(recordedWith: string, servers: readonly RecordedServer[]): string {
  const compact = (value: unknown) => JSON.stringify(value);
  const blocks = servers.map(({ tools, ...head }) => `${compact(head).slice(0, -1)},"tools":[\n${tools.map(compact).join(',\n')}\n]}`);
  return `{"recordedWith":${compact(recordedWith)},"servers":[\n${blocks.join(',\n')}\n]}\n`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const only = values.only?.split(',');
  const previous: RecordedServer[] = existsSync(OUT) ? (JSON.parse(readFileSync(OUT, 'utf8')) as { servers: RecordedServer[] }).servers : [];
  const byServer = new Map(previous.map((s) => [s.server, s]));
  for (const spec of REAL_SERVERS) {
    if (only !== undefined && !only.includes(spec.server)) continue;
    try {
      const recorded = await record(spec);
      if (recorded.tools.length === 0) throw new Error('listed no tools');
      byServer.set(spec.server, recorded);
      log(`${spec.server}: ${recorded.tools.length} tools (${spec.package}@${spec.version})`);
    } catch (error) {
      log(`${spec.server}: left out: ${error instanceof Error ? error.message.split('\n', 1)[0] : String(error)}`);
    }
  }
  const known = new Set(REAL_SERVERS.map((s) => s.server));
  const servers = [...byServer.values()].filter((s) => known.has(s.server)).sort((a, b) => a.server.localeCompare(b.server));
  writeFileSync(OUT, formatRecording(process.version, servers));
  log(`wrote ${servers.length} servers, ${servers.reduce((n, s) => n + s.tools.length, 0)} tools to bench/search/data/real-servers.json`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
