/**
 * Each server's recent requests, for the admin page (docs/operations.md, "Admin page"): per
 * minute, how many requests the server served, how many failed, and their latencies — fed by the
 * very samples the Prometheus histogram gets (`GatewayMetrics.observeRequest`), so the page and
 * `/metrics` never disagree about what was measured.
 *
 * Bounded: a server's history is a ring of {@link WINDOW_MINUTES} minute slots (the current
 * minute and those before it), each a fixed histogram of {@link BIN_COUNT} latency bins,
 * allocated on the server's first request; only servers the caller vouches for are kept (the
 * gateway's configured ones), so no request can make a new history appear.
 *
 * Latency bins grow by a factor of 2^(1/4) from 10 µs, so a quantile read from them (the bin's
 * geometric middle, clamped to the fastest and slowest request seen) is within about 10% of the
 * measured value; past the last bin (about 11 minutes) everything shares one, read as the
 * slowest request seen.
 */

/** Minutes the page looks back over (its table and chart), the current one included. */
export const WINDOW_MINUTES = 15;
const SLOTS = WINDOW_MINUTES;
const MINUTE_MS = 60_000;

const BINS_PER_DOUBLING = 4;
const FIRST_BIN_MS = 0.01;
/** 10 µs × 2^(104/4) ≈ 11 minutes: every longer request falls in the last bin. */
export const BIN_COUNT = 105;

/** The bin of a latency in milliseconds. */
function binOf(ms: number): number {
  if (!(ms > FIRST_BIN_MS)) return 0;
  return Math.min(BIN_COUNT - 1, Math.floor(Math.log2(ms / FIRST_BIN_MS) * BINS_PER_DOUBLING));
}

/** The geometric middle of a bin, in milliseconds. */
function middleOf(bin: number): number {
  return FIRST_BIN_MS * 2 ** ((bin + 0.5) / BINS_PER_DOUBLING);
}

class MinuteSlot {
  minute = -1;
  requests = 0;
  errors = 0;
  fastestMs = Number.POSITIVE_INFINITY;
  slowestMs = 0;
  readonly bins = new Uint32Array(BIN_COUNT);

  reset(minute: number): void {
    this.minute = minute;
    this.requests = 0;
    this.errors = 0;
    this.fastestMs = Number.POSITIVE_INFINITY;
    this.slowestMs = 0;
    this.bins.fill(0);
  }
}

/** One minute of a server's requests, as the page charts it. */
export interface MinuteActivity {
  /** The minute's start, in Unix seconds. */
  readonly at: number;
  readonly requests: number;
  readonly errors: number;
  /** The minute's 95th percentile latency in milliseconds; null without requests. */
  readonly p95Ms: number | null;
}

/** A server's requests over the window: totals, quantiles and the minutes one by one. */
export interface ActivitySummary {
  readonly windowMinutes: number;
  readonly requests: number;
  readonly errors: number;
  /** Median latency in milliseconds; null without requests. */
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
  /** Oldest first, the current (unfinished) minute last; empty when it served none in the window. */
  readonly minutes: readonly MinuteActivity[];
}

/** The `q` quantile of the requests counted in `bins`, clamped to the fastest and slowest seen. */
function quantile(bins: Uint32Array, count: number, q: number, fastestMs: number, slowestMs: number): number | null {
  if (count === 0) return null;
  const rank = Math.max(1, Math.ceil(q * count));
  let seen = 0;
  for (let bin = 0; bin < BIN_COUNT; bin++) {
    seen += bins[bin]!;
    // The last bin has no upper edge: the slowest request seen is all that is known of it.
    if (seen >= rank) return bin === BIN_COUNT - 1 ? slowestMs : Math.min(slowestMs, Math.max(fastestMs, middleOf(bin)));
  }
  return slowestMs;
}

export interface ServerActivityOptions {
  /** The servers whose requests are kept (the gateway's own): any other name is ignored. */
  readonly isServer: (server: string) => boolean;
  /** Milliseconds since the epoch (tests move it). */
  readonly now?: () => number;
}

export class ServerActivity {
  private readonly rings = new Map<string, MinuteSlot[]>();
  private readonly isServer: (server: string) => boolean;
  private readonly now: () => number;

  constructor(options: ServerActivityOptions) {
    this.isServer = options.isServer;
    this.now = options.now ?? Date.now;
  }

  /** Counts one request `server` served, with its outcome and duration. */
  record(server: string, failed: boolean, seconds: number): void {
    let ring = this.rings.get(server);
    if (ring === undefined) {
      if (!this.isServer(server)) return;
      ring = Array.from({ length: SLOTS }, () => new MinuteSlot());
      this.rings.set(server, ring);
    }
    const minute = Math.floor(this.now() / MINUTE_MS);
    const slot = ring[minute % SLOTS]!;
    if (slot.minute !== minute) slot.reset(minute);
    const ms = Math.max(0, seconds * 1000);
    slot.requests += 1;
    if (failed) slot.errors += 1;
    slot.fastestMs = Math.min(slot.fastestMs, ms);
    slot.slowestMs = Math.max(slot.slowestMs, ms);
    slot.bins[binOf(ms)]! += 1;
  }

  /** `server`'s requests over the window (all zero when it served none). */
  summary(server: string): ActivitySummary {
    const ring = this.rings.get(server);
    const current = Math.floor(this.now() / MINUTE_MS);
    const merged = new Uint32Array(BIN_COUNT);
    const minutes: MinuteActivity[] = [];
    let requests = 0;
    let errors = 0;
    let fastestMs = Number.POSITIVE_INFINITY;
    let slowestMs = 0;
    for (let minute = current - WINDOW_MINUTES + 1; minute <= current; minute++) {
      const slot = ring?.[minute % SLOTS];
      const at = (minute * MINUTE_MS) / 1000;
      if (slot === undefined || slot.minute !== minute || slot.requests === 0) {
        minutes.push({ at, requests: 0, errors: 0, p95Ms: null });
        continue;
      }
      requests += slot.requests;
      errors += slot.errors;
      fastestMs = Math.min(fastestMs, slot.fastestMs);
      slowestMs = Math.max(slowestMs, slot.slowestMs);
      for (let bin = 0; bin < BIN_COUNT; bin++) merged[bin]! += slot.bins[bin]!;
      minutes.push({ at, requests: slot.requests, errors: slot.errors, p95Ms: quantile(slot.bins, slot.requests, 0.95, slot.fastestMs, slot.slowestMs) });
    }
    return {
      windowMinutes: WINDOW_MINUTES,
      requests,
      errors,
      p50Ms: quantile(merged, requests, 0.5, fastestMs, slowestMs),
      p95Ms: quantile(merged, requests, 0.95, fastestMs, slowestMs),
      // A quiet server's fifteen empty minutes say nothing: the status stays small with many servers.
      minutes: requests === 0 ? [] : minutes,
    };
  }
}
