/**
 * Graceful drain (docs/operations.md, "Graceful drain"): the first half of a stop. New requests
 * are refused from the first moment; the calls in flight get up to `timeoutMs` to finish; then
 * every SSE stream still open is ended so its client resumes (with `Last-Event-ID`, on another
 * replica when the Redis store is shared). What follows — closing sessions, reaping children,
 * flushing the logs — is the gateway's ordinary close.
 */
import type { Logger } from '../observability/logger.js';
import type { DrainGate } from './drain-gate.js';

export interface DrainOutcome {
  /** Every call in flight finished before the deadline. */
  readonly finished: boolean;
  /** Calls still unanswered when the streams were ended (0 when `finished`). */
  readonly unfinished: number;
  /** SSE streams ended so that their clients resume elsewhere. */
  readonly streamsEnded: number;
}

export async function drainGateway(gate: DrainGate, timeoutMs: number, logger: Logger): Promise<DrainOutcome> {
  gate.begin();
  logger.info({ inFlight: gate.inFlight, openStreams: gate.openStreams, timeoutMs }, 'draining: refusing new requests, waiting for calls in flight');
  const finished = await gate.settled(timeoutMs);
  const unfinished = gate.inFlight;
  const streamsEnded = gate.closeStreams();
  if (finished) logger.info({ streamsEnded }, 'drained: every call in flight finished');
  else logger.warn({ unfinished, streamsEnded, timeoutMs }, 'drain deadline passed: ending the streams of unfinished calls (their clients resume elsewhere)');
  return { finished, unfinished, streamsEnded };
}
