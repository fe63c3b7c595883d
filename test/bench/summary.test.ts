/**
 * The bench's verdicts (bench/lib/summary.ts): ratios are taken within one run — throughput and
 * own CPU against the byte passthrough, tails against the direct server — judged on the pinned
 * rounds when there are any (the unpinned ratio shown beside), and a target with nothing
 * measured says so instead of passing.
 */
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../bench/lib/load.js';
import { judgeTargets, loadRowsByMode } from '../../bench/lib/summary.js';

/** One round: `rps`, and the CPU per call of every server process of the path. */
const result = (rps: number, pathCpuUsPerCall: number, p99 = 2): LoadResult => ({
  rps,
  p50: 1,
  p99,
  ok: rps,
  failed: 0,
  foreignCpu: 0,
  cpuUsPerCall: pathCpuUsPerCall,
  pathCpuUsPerCall,
  clientCpuUsPerCall: 50,
});

interface Figures {
  http: number;
  httpCpu: number;
  httpP99?: number;
  stdio?: number;
  stdioCpu?: number;
  rival?: number;
}

/** The direct echo costs 100 µs per call and the byte passthrough 100 µs more (its own CPU). */
const rounds = ({ http, httpCpu, httpP99 = 4, stdio = 900, stdioCpu = 220, rival = 300 }: Figures) => {
  const both = (r: LoadResult) => ({ 16: [r], 64: [r] });
  return {
    direct: both(result(1000, 100, 2)),
    passthrough: both(result(500, 200)),
    'mcp-relay': both(result(450, 230)),
    'portcullis-http': both(result(http, httpCpu, httpP99)),
    'portcullis-stdio': both(result(stdio, stdioCpu)),
    'mcp-proxy': both(result(rival, 500)),
  };
};

const named = (targets: ReturnType<typeof judgeTargets>, ...parts: string[]) => {
  const found = targets.find((t) => parts.every((p) => t.name.includes(p)));
  if (found === undefined) throw new Error(`no target named with ${parts.join(', ')}: ${targets.map((t) => t.name).join(' | ')}`);
  return found;
};

describe('bench targets of the relay core', () => {
  it('judges HTTP throughput against the byte passthrough on the pinned rounds, the unpinned ratio beside', () => {
    const rows = loadRowsByMode({ pinned: rounds({ http: 460, httpCpu: 240 }), unpinned: rounds({ http: 250, httpCpu: 240 }) });
    const targets = judgeTargets({ rows, concurrencies: [16, 64], readyAfterUpstream: [] });
    const throughput = named(targets, 'throughput', 'c=16');
    expect(throughput.met).toBe(true);
    expect(throughput.measured).toContain('0.92× (unpinned 0.50×)');
    expect(throughput.measured).toContain('minimal MCP relay 0.90×');
  });

  it('charges a path only the CPU it adds over the direct server, bounded by 1.5× the passthrough’s', () => {
    // HTTP: 240 − 100 = 140 µs against the passthrough's 100 µs → 1.4×, met; stdio 220 − 100 = 120 µs.
    const met = judgeTargets({ rows: loadRowsByMode({ pinned: rounds({ http: 460, httpCpu: 240 }) }), concurrencies: [16, 64], readyAfterUpstream: [] });
    expect(named(met, 'HTTP: own CPU', 'c=64').met).toBe(true);
    expect(named(met, 'HTTP: own CPU', 'c=64').measured).toContain('1.40× (140 µs vs 100 µs; minimal MCP relay 130 µs)');
    expect(named(met, 'stdio: own CPU', 'c=16').met).toBe(true);
    // 300 − 100 = 200 µs: 2× the passthrough's own.
    const missed = judgeTargets({ rows: loadRowsByMode({ pinned: rounds({ http: 460, httpCpu: 300 }) }), concurrencies: [16, 64], readyAfterUpstream: [] });
    expect(named(missed, 'HTTP: own CPU', 'c=16').met).toBe(false);
  });

  it('misses a target below its bound and leaves an unmeasured one undecided', () => {
    const rows = loadRowsByMode({ pinned: rounds({ http: 400, httpCpu: 240, httpP99: 7, rival: 400 }) });
    const targets = judgeTargets({
      rows,
      concurrencies: [16, 64],
      readyAfterUpstream: [],
      coldStartMs: { portcullisStdio: 900, mcpProxy: 800 },
      idleRssByPath: { passthrough: 40 * 2 ** 20, 'portcullis-http': 80 * 2 ** 20, 'portcullis-stdio': 70 * 2 ** 20 },
    });
    expect(named(targets, 'throughput', 'c=64').met).toBe(false);
    expect(named(targets, 'HTTP: p99').met).toBe(false);
    expect(named(targets, 'HTTP: p99').measured).toContain('3.50×');
    expect(named(targets, 'stdio: p99').met).toBe(true);
    expect(named(targets, '2.5× mcp-proxy').met).toBe(false);
    expect(named(targets, '2.5× supergateway').met).toBeUndefined();
    expect(named(targets, 'cold start').met).toBe(false);
    expect(named(targets, 'idle RSS Portcullis → HTTP').met).toBe(false);
    expect(named(targets, 'idle RSS Portcullis → stdio').met).toBe(true);
  });
});
