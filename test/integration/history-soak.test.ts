/**
 * The retained history's byte budgets hold under a benign upstream with big answers: one 2025-era
 * session makes 50 calls whose answers are 15 MiB each, every one streamed to the client (and so
 * kept for resumption), through the `portcullis` CLI as its own process (with the bench's
 * gc-probe preload, which reports memory after full GCs on SIGUSR2). After the calls the gateway
 * retains no more than the session's history budget over its idle memory, and its peak RSS (the
 * kernel's VmHWM) stays under its idle RSS plus the process's history budget plus the copies a
 * call in flight makes of its one answer. Before the budgets, the history alone retained 750 MiB
 * here (and a gateway died at its heap limit after ~270 such calls).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Cleanup, CLI_JS, connectClient, httpServer, ROOT, startHttpFixture, textOf, waitUntil } from './harness.js';
import { bigText, startOversizeUpstream, type OversizeUpstream } from './harness/oversize-upstream.js';

const MIB = 1024 * 1024;
const CALLS = 50;
const ANSWER_BYTES = 15 * MIB;
/** The default policy's budgets (limits.maxHistoryBytes, limits.maxSessionHistoryBytes, limits.maxUpstreamMessageBytes). */
const TOTAL_BUDGET = 256 * MIB;
const SESSION_BUDGET = 16 * MIB;
const MESSAGE_CAP = 16 * MIB;
/**
 * Copies of its answer one call holds on its way through (upstream bytes, the SSE parser's text,
 * the parsed result, the stored JSON, the written SSE event and its bytes), with garbage not yet
 * collected: the transient part of the peak, bounded by the message cap, not by the history.
 */
const IN_FLIGHT_COPIES = 10;
const GC_PROBE = pathToFileURL(join(ROOT, 'dist/bench/lib/gc-probe.js')).href;

interface Probe {
  rss: number;
  heapUsed: number;
  external: number;
}

/** Memory after two full GCs, from the gc-probe line the gateway writes on SIGUSR2. */
async function probe(pid: number, stderr: () => string): Promise<Probe> {
  const seen = stderr().split('GC_PROBE ').length;
  process.kill(pid, 'SIGUSR2');
  const line = await waitUntil(() => {
    const parts = stderr().split('GC_PROBE ');
    return parts.length > seen && parts[parts.length - 1]!.includes('\n') && parts[parts.length - 1]!.split('\n', 1)[0];
  }, 'the gc probe line');
  return JSON.parse(line) as Probe;
}

const perFile = new Cleanup();
let upstream: OversizeUpstream;
let dir: string;

beforeAll(async () => {
  assertBuilt();
  const fixture = await startHttpFixture();
  perFile.add(() => fixture.stop());
  upstream = await startOversizeUpstream(fixture.match);
  perFile.add(() => upstream.close());
  dir = mkdtempSync(join(tmpdir(), 'portcullis-soak-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
});

afterAll(() => perFile.run());

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM). */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const found = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (found === null) throw new Error(`no ${field} for pid ${pid}`);
  return Number(found[1]) * 1024;
}

describe('50 streamed 15 MiB answers on one session', () => {
  it(
    'retain at most the session’s history budget, and keep the peak RSS under idle plus the process budget plus one call’s copies',
    async () => {
      const config = join(dir, 'gateway.json');
      writeFileSync(
        config,
        JSON.stringify({
          listen: { host: '127.0.0.1', port: 0 },
          // Every call streams from its first byte, so every answer is kept for resumption.
          eventStore: { streamAfterMs: 0 },
          servers: { big: httpServer(upstream.url) },
        }),
      );
      const child = spawn(process.execPath, ['--expose-gc', '--import', GC_PROBE, CLI_JS, '--config', config], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      perFile.add(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const url = await waitUntil(() => /^\[portcullis\]:Ready\. (\S+)$/m.exec(stdout)?.[1], 'the Ready line', 20_000);
      const pid = child.pid!;
      const idle = statusBytes(pid, 'VmRSS');
      const idleRetained = await probe(pid, () => stderr);
      const { client } = await connectClient(perFile, url, '2025');
      expect(idleRetained.rss).toBeGreaterThan(0);
      let largestAfterCall = 0;
      for (let call = 0; call < CALLS; call += 1) {
        const result = await client.callTool({ name: 'big__echo', arguments: { text: bigText('sse', ANSWER_BYTES) } }, undefined, { timeout: 120_000 });
        expect(textOf(result)).toHaveLength(ANSWER_BYTES);
        largestAfterCall = Math.max(largestAfterCall, statusBytes(pid, 'VmRSS'));
      }
      const peak = statusBytes(pid, 'VmHWM');
      const after = await probe(pid, () => stderr);
      const retained = after.heapUsed + after.external - (idleRetained.heapUsed + idleRetained.external);
      const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;
      console.log(
        `history soak: ${CALLS} × ${ANSWER_BYTES / MIB} MiB streamed on one session; gateway RSS idle ${mib(idle)}, ` +
          `largest after a call ${mib(largestAfterCall)}, peak ${mib(peak)}; retained after full GCs ${mib(retained)} over idle ` +
          `(budgets: ${mib(SESSION_BUDGET)} per session, ${mib(TOTAL_BUDGET)} per process)`,
      );
      expect(upstream.answers.filter((a) => a.finished === true)).toHaveLength(CALLS);
      // What stays: at most the session's history budget (the last answer), nothing per call.
      expect(retained).toBeLessThan(SESSION_BUDGET + 8 * MIB);
      expect(peak).toBeLessThan(idle + TOTAL_BUDGET + IN_FLIGHT_COPIES * MESSAGE_CAP);
    },
    600_000,
  );
});
