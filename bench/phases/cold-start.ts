/**
 * Cold start per path: spawn → first successful `tools/list` in an initialized session, polled
 * every 5 ms from the moment of spawn. For Portcullis also: spawn → Ready line, and Ready minus
 * the last `upstream ready` log line (the "Ready within 100 ms of the slowest required
 * upstream being ready"). The stdio echo alone (spawn → initialize answered) is measured too, so
 * the upstream's own start can be told apart from the proxy's.
 */
import { readFileSync } from 'node:fs';
import { freeLoopbackPort } from '../lib/ports.js';
import { spawnTracked } from '../lib/processes.js';
import { assertLoopbackOnly, pathUrl, SCRIPTS, spawnPath, untilToolsList, type BenchContext, type PathId } from '../paths.js';

export interface ColdStartSample {
  /** Spawn → first tools/list answered, ms. */
  toolsListMs: number;
  /** Portcullis: spawn → Ready line, ms. */
  readyMs?: number;
  /** Portcullis: Ready line − last `upstream ready` log line, ms. */
  readyAfterUpstreamMs?: number;
}

const READY = /^\[portcullis\]:Ready\. /;

/** Epoch ms of every `upstream ready` line in a Portcullis log (pino JSON lines). */
export function upstreamReadyTimes(logText: string): number[] {
  const times: number[] = [];
  for (const line of logText.split('\n')) {
    if (!line.includes('"upstream ready"')) continue;
    try {
      const entry = JSON.parse(line) as { time?: unknown; msg?: unknown };
      if (entry.msg === 'upstream ready' && typeof entry.time === 'number') times.push(entry.time);
    } catch {
      // Not a JSON line (a child's stderr relayed raw, say).
    }
  }
  return times;
}

/** One cold start of one path; the process is stopped before this resolves. */
export async function coldStart(id: PathId, ctx: BenchContext): Promise<ColdStartSample> {
  const port = await freeLoopbackPort();
  const proc = spawnPath(id, ctx, port);
  const isGateway = id.startsWith('portcullis-');
  const ready = isGateway ? proc.waitForLine(READY, 30_000) : undefined;
  ready?.catch(() => undefined);
  try {
    const toolsListMs = await untilToolsList(proc, pathUrl(port), 30_000);
    await assertLoopbackOnly(proc);
    if (ready === undefined) return { toolsListMs };
    const line = await ready;
    const upstream = upstreamReadyTimes(readFileSync(proc.logFile, 'utf8'));
    return {
      toolsListMs,
      readyMs: line.at - proc.spawnedAt,
      readyAfterUpstreamMs: upstream.length === 0 ? undefined : line.epoch - Math.max(...upstream),
    };
  } finally {
    await proc.stop();
  }
}

/** The stdio echo alone: spawn → its answer to `initialize` on stdout, ms. */
export async function stdioEchoColdStart(ctx: BenchContext): Promise<number> {
  const proc = spawnTracked('echo-stdio-alone', [SCRIPTS.echoStdio], { logDir: ctx.logDir, readStdout: true, stdinPipe: true });
  try {
    const answered = proc.waitForLine(/"id":\s*1\b/, 30_000);
    proc.child.stdin?.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'portcullis-bench', version: '1.0.0' } },
      })}\n`,
    );
    return (await answered).at - proc.spawnedAt;
  } finally {
    proc.child.stdin?.end();
    await proc.stop();
  }
}
