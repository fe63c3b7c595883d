/**
 * Operator lines for refusals a client can provoke at will (a session cap, a rate limit): the
 * first refusal of a kind is logged at warn at once, further ones of the same kind are counted
 * and reported on the next line at most once per interval. A client hammering a limit then
 * costs the log one line per interval, not one per request (a log flood is its own outage).
 */
import type { Logger } from './logger.js';

export class RefusalLog {
  private readonly logger: Logger;
  private readonly intervalMs: number;
  /** Per kind: when it was last logged and how many refusals went unreported since. Kinds are a fixed set of names. */
  private readonly kinds = new Map<string, { loggedAt: number; unreported: number }>();

  constructor(logger: Logger, intervalMs = 10_000) {
    this.logger = logger;
    this.intervalMs = intervalMs;
  }

  /** Notes one refusal of `kind`; logs `message` with `fields` (and `refused`, the count it covers) when due. */
  warn(kind: string, fields: Record<string, unknown>, message: string, now = Date.now()): void {
    const seen = this.kinds.get(kind);
    if (seen !== undefined && now - seen.loggedAt < this.intervalMs) {
      seen.unreported += 1;
      return;
    }
    this.logger.warn({ ...fields, refused: (seen?.unreported ?? 0) + 1 }, message);
    this.kinds.set(kind, { loggedAt: now, unreported: 0 });
  }
}
