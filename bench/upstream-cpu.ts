/**
 * CPU per call of the gateway's upstream client alone: one `UpstreamLink` (SDK `Client` over the
 * connector the gateway would build) to the bench's HTTP echo or a stdio echo child, `tools/call`
 * at a fixed concurrency, this process's CPU time (user + system) divided by the calls. No
 * inbound side, no load generator in the process: it says what the upstream half of a call costs.
 *
 *   npm run build && node dist/bench/upstream-cpu.js [--calls N] [--concurrency C] [--what http,stdio]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createEgressDispatcher } from '../src/net/egress-guard.js';
import { silentLogger } from '../src/observability/logger.js';
import { createConnector } from '../src/upstream/connector.js';
import { UpstreamLink } from '../src/upstream/link.js';
import { serverSchema } from '../src/config/server-schema.js';
import { killAllNow, stopAll } from './lib/processes.js';
import { httpEcho, startEchoHttp, stdioEcho } from './paths.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '20000' }, concurrency: { type: 'string', default: '16' }, what: { type: 'string', default: 'http,stdio' }, threads: { type: 'boolean', default: false } } });
const calls = Number(values.calls);
const concurrency = Number(values.concurrency);

const sink = { request: async () => ({}), notify: async () => undefined, canRequest: false };

async function measure(link: UpstreamLink, n: number): Promise<{ user: number; system: number }> {
  let next = 0;
  const start = process.cpuUsage();
  const worker = async () => {
    while (next++ < n) await link.request('tools/call', { name: 'echo', arguments: { text: 'hello' } }, { sink });
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(start);
  return { user: used.user / n, system: used.system / n };
}

/** CPU ticks per thread of this process (name → ticks), to see where CPU time goes. */
function threadTicks(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(`${name}#${tid}`, Number(fields[11]) + Number(fields[12]));
    } catch {
      // gone
    }
  }
  return out;
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), 'portcullis-upstream-cpu-'));
  const logger = silentLogger();
  try {
    const echo = await startEchoHttp({ logDir, upstreamUrl: '' });
    for (const what of values.what.split(',')) {
      const config = serverSchema.parse(what === 'http' ? httpEcho(echo.url) : stdioEcho());
      const deps = {
        parentEnv: process.env,
        readEnv: (name: string) => process.env[name],
        dispatcherFor: () => createEgressDispatcher({ server: 'echo', allowPrivateNetwork: true, connectTimeoutMs: 10_000, logger }),
      };
      const connector = createConnector('echo', config, deps, logger);
      const link = await UpstreamLink.connect({ server: 'echo', transport: connector.transport, negotiation: '2025', requestTimeoutMs: 30_000, logger, clientCapabilities: {} });
      await measure(link, Math.min(2000, calls));
      const before = threadTicks();
      const t0 = performance.now();
      const perCall = await measure(link, calls);
      const wall = performance.now() - t0;
      if (values.threads === true) {
        for (const [name, ticks] of threadTicks()) {
          const used = ticks - (before.get(name) ?? 0);
          if (used > 0) process.stdout.write(`  thread ${name}: ${((used * 1e4) / calls).toFixed(1)} µs per call\n`);
        }
        process.stdout.write(`  wall ${(wall * 1000 / calls).toFixed(1)} µs per call\n`);
      }
      process.stdout.write(`${what}: ${(perCall.user + perCall.system).toFixed(1)} µs CPU per call (user ${perCall.user.toFixed(1)}, system ${perCall.system.toFixed(1)}) (c=${concurrency}, ${calls} calls, protocol ${link.protocolVersion})\n`);
      await link.close();
    }
  } finally {
    await stopAll();
    rmSync(logDir, { recursive: true, force: true });
  }
}

process.on('exit', killAllNow);
main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
