/**
 * Memory per idle 2025-era session, the default way (issue 22, "many sessions"): a gateway whose
 * config names one stdio echo server and nothing else (default isolation), N sessions that each
 * initialise and call the echo tool once and send no DELETE; the gateway's JS heap and RSS after
 * two forced full GCs (the gc-probe preload), minus the same before them, over N, and the child
 * processes it started. For comparison the same sessions without a call, in front of the HTTP
 * echo. Sessions are DELETEd afterwards, every process stopped by pid. Not a test: a figure for
 * docs/performance.md ("Many sessions").
 *
 *   npm run build && node dist/bench/idle-sessions.js [--sessions N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runScript, stopAll } from './lib/processes.js';
import { startEchoHttp, type BenchContext } from './paths.js';
import { measureSessionMemory, type SessionMemoryOptions, type SessionMemoryResult } from './phases/portcullis-extras.js';

const { values } = parseArgs({ options: { sessions: { type: 'string', default: '900' } } });
const sessions = Number(values.sessions);
// 1000 is the default policy's session ceiling; the figure wants hundreds to rise above noise.
if (!Number.isInteger(sessions) || sessions < 50 || sessions > 1000) throw new TypeError('--sessions must be an integer from 50 to 1000');

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

function line(result: SessionMemoryResult): string {
  const what = `${result.sessions} sessions, ${result.upstream} upstream, isolation "${result.isolation}"${result.called ? ', one call each' : ''}`;
  return `${what}: heap ${kb(result.perSessionHeap)}/session, RSS after GC ${kb(result.perSession)}/session (raw ${kb(result.perSessionRss)}), external ${kb(result.perSessionExternal)}/session; gateway children ${result.children}`;
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), 'portcullis-idle-sessions-'));
  try {
    const upstream = await startEchoHttp({ logDir, upstreamUrl: '' }, 0);
    const ctx: BenchContext = { logDir, upstreamUrl: upstream.url, upstreamPid: upstream.process.pid };
    const runs: SessionMemoryOptions[] = [
      { isolation: 'principal', sessions, upstream: 'stdio', call: true },
      { isolation: 'principal', sessions, upstream: 'http', call: false },
    ];
    for (const run of runs) console.log(line(await measureSessionMemory(ctx, run)));
  } finally {
    await stopAll();
    rmSync(logDir, { recursive: true, force: true });
  }
}

runScript(main);
