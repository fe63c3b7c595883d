/**
 * One load round against one MCP endpoint with autocannon (programmatic API): a fixed number of
 * keep-alive connections for a fixed duration, every request a JSON-RPC request with a fresh id
 * (`idReplacement`: a gateway refuses a duplicate in-flight id per session). Latencies are taken
 * from autocannon's per-response event at sub-millisecond resolution (its own histogram keeps
 * whole milliseconds), from 2xx responses; a body that fails `verify` is counted as failed.
 */
import autocannon from 'autocannon';
import { cpuSnapshot, foreignShare } from './cpu-noise.js';
import { ownPids } from './processes.js';
import { percentileSorted } from './stats.js';

export interface LoadOptions {
  url: string;
  headers: Readonly<Record<string, string>>;
  /** JSON-RPC request body; `[<id>]` is replaced with a unique id per request. */
  body: string;
  connections: number;
  durationS: number;
  /** True when a response body is a successful answer (counted as a mismatch otherwise). */
  verify(body: string): boolean;
}

export interface LoadResult {
  /** Successful responses per second. */
  rps: number;
  /** Latency percentiles of successful responses, in milliseconds. */
  p50: number;
  p99: number;
  ok: number;
  /** Connection errors, timeouts, non-2xx statuses and bodies that failed verification. */
  failed: number;
  /** Share of the machine's CPU used by processes outside the bench during the round (0–1). */
  foreignCpu: number;
  /** CPU time (user + system) the measured process spent per successful call, µs. */
  cpuUsPerCall?: number;
  /** CPU time of every server process of the path per call, µs (set by the load phase). */
  pathCpuUsPerCall?: number;
  /** CPU time the load generator (this process) spent per successful call, µs. */
  clientCpuUsPerCall: number;
}

/** Far more samples than a round on two cores produces; one buffer, reused (rounds never overlap). */
const MAX_SAMPLES = 2_000_000;
const samples = new Float64Array(MAX_SAMPLES);

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  let count = 0;
  const before = cpuSnapshot(ownPids());
  const clientBefore = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        method: 'POST',
        headers: { ...options.headers },
        body: options.body,
        idReplacement: true,
        connections: options.connections,
        duration: options.durationS,
        timeout: 10,
        verifyBody: options.verify,
        skipAggregateResult: true,
      },
      (error, result) => {
        if (error !== null) {
          reject(error);
          return;
        }
        const sorted = samples.subarray(0, count).sort();
        const ok = Math.max(0, count - result.mismatches);
        const client = process.cpuUsage(clientBefore);
        resolve({
          rps: ok / result.duration,
          p50: percentileSorted(sorted, 50),
          p99: percentileSorted(sorted, 99),
          ok,
          failed: result.errors + result.non2xx + result.mismatches,
          foreignCpu: foreignShare(before, cpuSnapshot(ownPids())),
          clientCpuUsPerCall: ok > 0 ? (client.user + client.system) / ok : Number.NaN,
        });
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300 && count < MAX_SAMPLES) samples[count++] = responseTime;
    });
  });
}

/** True when a JSON or SSE body carries a JSON-RPC result and no error. */
export function isSuccessBody(body: string): boolean {
  return body.includes('"result"') && !body.includes('"error"') && !body.includes('"isError":true');
}
