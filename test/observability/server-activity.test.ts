/**
 * Each server's recent requests for the admin page (server-activity.ts): counted per minute over
 * a sliding window, quantiles within the bins' stated accuracy, and bounded — only the servers the
 * gateway vouches for are kept, whatever names arrive, and each keeps a fixed ring.
 */
import { describe, expect, it } from 'vitest';
import { ServerActivity, WINDOW_MINUTES } from '../../src/observability/server-activity.js';
import { GatewayMetrics } from '../../src/observability/metrics.js';
import { parseExposition } from './exposition.js';

const MINUTE = 60_000;
const START = Date.UTC(2026, 11, 1, 12, 0, 0);

function clock() {
  let now = START;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** The exact `q` quantile of `values` (the same rank rule the summary uses). */
function exact(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

describe('server activity', () => {
  it('counts requests and errors per minute, oldest first, the current minute last', () => {
    const time = clock();
    const activity = new ServerActivity({ isServer: () => true, now: time.now });
    activity.record('a', false, 0.010);
    activity.record('a', true, 0.020);
    time.advance(2 * MINUTE);
    activity.record('a', false, 0.030);
    const summary = activity.summary('a');
    expect(summary.windowMinutes).toBe(WINDOW_MINUTES);
    expect(summary.minutes).toHaveLength(WINDOW_MINUTES);
    expect(summary.requests).toBe(3);
    expect(summary.errors).toBe(1);
    const last = summary.minutes.at(-1)!;
    const twoBefore = summary.minutes.at(-3)!;
    expect(last).toMatchObject({ at: (START + 2 * MINUTE) / 1000, requests: 1, errors: 0 });
    expect(twoBefore).toMatchObject({ at: START / 1000, requests: 2, errors: 1 });
    expect(summary.minutes.at(-2)).toMatchObject({ requests: 0, p95Ms: null });
    // Minutes are consecutive.
    expect(summary.minutes.map((m) => m.at - summary.minutes[0]!.at)).toEqual(summary.minutes.map((_, i) => i * 60));
  });

  it('forgets minutes that slid out of the window, and a slot reused a window later starts from zero', () => {
    const time = clock();
    const activity = new ServerActivity({ isServer: () => true, now: time.now });
    activity.record('a', true, 0.5);
    time.advance(WINDOW_MINUTES * MINUTE);
    expect(activity.summary('a')).toEqual({ windowMinutes: WINDOW_MINUTES, requests: 0, errors: 0, p50Ms: null, p95Ms: null, minutes: [] });
    // The same ring slot, one window later: the old minute's counts are gone.
    activity.record('a', false, 0.001);
    expect(activity.summary('a')).toMatchObject({ requests: 1, errors: 0 });
    expect(activity.summary('a').p95Ms).toBeCloseTo(1, 5);
  });

  it('reads p50 and p95 within 10% of the measured values, and exactly for one request', () => {
    const time = clock();
    const activity = new ServerActivity({ isServer: () => true, now: time.now });
    activity.record('one', false, 0.0423);
    expect(activity.summary('one').p50Ms).toBeCloseTo(42.3, 6);
    expect(activity.summary('one').p95Ms).toBeCloseTo(42.3, 6);

    // A skewed spread (0.2 ms … 3 s) over several minutes, as a mixed server's calls would be.
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const values: number[] = [];
    for (let minute = 0; minute < 5; minute++) {
      for (let i = 0; i < 400; i++) {
        const ms = 0.2 * Math.exp(random() * Math.log(15_000));
        values.push(ms);
        activity.record('mixed', false, ms / 1000);
      }
      time.advance(MINUTE);
    }
    const summary = activity.summary('mixed');
    expect(summary.requests).toBe(2000);
    for (const [q, read] of [[0.5, summary.p50Ms], [0.95, summary.p95Ms]] as const) {
      const truth = exact(values, q);
      expect(Math.abs(read! - truth) / truth, `q=${q}: read ${read}, measured ${truth}`).toBeLessThan(0.1);
    }
  });

  it('keeps nothing for a server it is not told is the gateway’s, however many names arrive', () => {
    const activity = new ServerActivity({ isServer: (name) => name === 'mine' });
    for (let i = 0; i < 10_000; i++) activity.record(`session.made-up-${i}`, false, 0.001);
    activity.record('mine', false, 0.001);
    expect(activity.summary('session.made-up-1').requests).toBe(0);
    expect(activity.summary('mine').requests).toBe(1);
    expect((activity as unknown as { rings: Map<string, unknown> }).rings.size).toBe(1);
  });

  it('puts a request slower than the last bin in it, and a zero duration in the first', () => {
    const activity = new ServerActivity({ isServer: () => true, now: () => START });
    activity.record('slow', false, 3_600);
    activity.record('slow', false, 0);
    const summary = activity.summary('slow');
    expect(summary.p95Ms).toBe(3_600_000);
    expect(summary.p50Ms).toBeLessThan(0.012); // the first bin: everything under 12 µs
  });
});

describe('the metrics feed', () => {
  it('feeds each gateway server its samples and labels a server a client brought as unknown, with its tools', async () => {
    const metrics = new GatewayMetrics();
    metrics.attach({ sessions2025: () => 0, upstreams: () => [], stdioChildren: () => new Map(), isServer: (name) => name === 'files' });
    metrics.observeRequest({ method: 'tools/call', server: 'files', tool: 'files__read', outcome: 'ok', seconds: 0.004 });
    metrics.observeRequest({ method: 'tools/call', server: 'files', tool: 'files__read', outcome: 'error', seconds: 0.006 });
    for (let i = 0; i < 50; i++) metrics.observeRequest({ method: 'tools/call', server: `session.brought-${i}`, tool: `session.brought-${i}__x`, outcome: 'ok', seconds: 0.001 });
    metrics.observeRequest({ method: 'tools/list', server: '', tool: '', outcome: 'ok', seconds: 0.001 });

    expect(metrics.activity.summary('files')).toMatchObject({ requests: 2, errors: 1 });
    expect(metrics.activity.summary('session.brought-1').requests).toBe(0);
    const parsed = parseExposition((await metrics.render()).body);
    const series = parsed.find('mcp_server_operation_duration_seconds_count');
    expect(series.map((s) => s.labels.server).sort()).toEqual(['', 'files', 'files', 'unknown']);
    expect(parsed.value('mcp_server_operation_duration_seconds_count', { server: 'unknown', gen_ai_tool_name: 'unknown' })).toBe(50);
  });
});
