import { describe, expect, it } from 'vitest';
import { integrityTargets, runIntegrityBenchmark } from '../../bench/integrity/false-positives.js';

describe('the scanner on the recorded real servers', () => {
  it('flags at most 1% of 1,403 published tools, each with a reason', () => {
    const report = runIntegrityBenchmark({ rounds: 1 });
    expect(report.tools).toBe(1403);
    expect(report.servers).toBe(37);
    expect(report.flagged.length / report.tools).toBeLessThanOrEqual(0.01);
    for (const flagged of report.flagged) expect(flagged.flags.every((f) => f.detail.length > 0)).toBe(true);
    expect(integrityTargets(report).every((t) => t.met === true)).toBe(true);
  });
});
