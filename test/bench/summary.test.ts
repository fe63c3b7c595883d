/**
 * The bench's verdicts (bench/lib/summary.ts): ratios are taken against the direct path of the
 * same pin mode, targets are judged on the pinned rounds when there are any (the unpinned ratio
 * shown beside), and a target with nothing measured says so instead of passing.
 */
import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../bench/lib/load.js';
import { judgeTargets, loadRowsByMode } from '../../bench/lib/summary.js';

const result = (rps: number, cpuUsPerCall = 100): LoadResult => ({ rps, p50: 1, p99: 2, ok: rps, failed: 0, foreignCpu: 0, cpuUsPerCall, clientCpuUsPerCall: 50 });

const rounds = (direct: number, http: number, pass: number, gatewayCpu: number) => ({
  direct: { 16: [result(direct)], 64: [result(direct)] },
  passthrough: { 16: [result(pass)], 64: [result(pass)] },
  'portcullis-http': { 16: [result(http, gatewayCpu)], 64: [result(http, gatewayCpu)] },
});

describe('bench targets', () => {
  it('judges the HTTP ratio and gateway CPU on the pinned rounds, with the unpinned ratio beside', () => {
    const rows = loadRowsByMode({ pinned: rounds(1000, 500, 420, 280), unpinned: rounds(1000, 300, 800, 400) });
    const targets = judgeTargets({ rows, concurrencies: [16, 64], readyAfterUpstream: [] });
    const ratio = targets.find((t) => t.name.includes('≥ 0.45× direct') && t.name.includes('c=16'))!;
    expect(ratio.met).toBe(true);
    expect(ratio.measured).toContain('0.50× (unpinned 0.30×)');
    expect(ratio.measured).toContain('byte passthrough 0.42×');
    expect(targets.find((t) => t.name.includes('CPU ≤ 300') && t.name.includes('c=64'))!.met).toBe(true);
  });

  it('misses a target below its bound and leaves an unmeasured one undecided', () => {
    const rows = loadRowsByMode({ pinned: rounds(1000, 400, 420, 900) });
    const targets = judgeTargets({ rows, concurrencies: [16, 64], readyAfterUpstream: [], coldStartMs: { portcullisStdio: 900, mcpProxy: 800 } });
    expect(targets.find((t) => t.name.includes('≥ 0.45× direct') && t.name.includes('c=64'))!.met).toBe(false);
    expect(targets.find((t) => t.name.includes('CPU ≤ 300') && t.name.includes('c=16'))!.met).toBe(false);
    expect(targets.find((t) => t.name.includes('2× mcp-proxy'))!.met).toBeUndefined();
    expect(targets.find((t) => t.name.includes('cold start'))!.met).toBe(false);
  });
});
