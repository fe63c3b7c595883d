/**
 * SSE event ids for resumable 2025-era streams: `<streamId>::<seq>`, where `seq` comes from one
 * counter per session. Every stream's ids therefore increase strictly (a per-stream monotonic
 * sequence, never time-based: the SDK example store mis-orders events stored in the same
 * millisecond; PITFALLS.md), and a session-wide counter orders every event of the session, which
 * is also the order in which the oldest are evicted.
 *
 * Each event also remembers `prev`, the sequence of the event before it on the same stream (0:
 * none known). A resume point is sound exactly when the first retained event of the stream after
 * it names it as `prev`: that proves nothing in between was evicted (see `classifyResume`).
 */

/** Separator between the stream id and the sequence; stream ids never end with it. */
const SEPARATOR = '::';

/** Longest `Last-Event-ID` accepted (SDK stream ids are UUIDs or `_GET_stream`). */
export const MAX_EVENT_ID_LENGTH = 256;

/** Largest sequence accepted: exact in a double, and in a Redis stream id. */
const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** Streams of one session whose last sequence is remembered; the least recently written go first. */
export const MAX_TRACKED_STREAMS = 1024;

export interface ParsedEventId {
  readonly streamId: string;
  readonly seq: number;
}

export function formatEventId(streamId: string, seq: number): string {
  return `${streamId}${SEPARATOR}${seq}`;
}

/** `<streamId>::<seq>` with a non-empty stream id and a sequence ≥ 1; `undefined` for anything else. */
export function parseEventId(eventId: string): ParsedEventId | undefined {
  if (eventId.length > MAX_EVENT_ID_LENGTH) return undefined;
  const at = eventId.lastIndexOf(SEPARATOR);
  if (at <= 0) return undefined;
  const digits = eventId.slice(at + SEPARATOR.length);
  if (!/^[1-9][0-9]{0,15}$/.test(digits)) return undefined;
  const seq = Number(digits);
  if (seq > MAX_SEQ) return undefined;
  return { streamId: eventId.slice(0, at), seq };
}

/** What `SessionSequence.next` hands out for one event. */
export interface Assigned {
  readonly seq: number;
  /** The previous event's sequence on the same stream; 0 when none is known. */
  readonly prev: number;
}

/**
 * One session's event counter and, for the {@link MAX_TRACKED_STREAMS} most recently written
 * streams, the last sequence written on each. Bounded: a session making thousands of calls (one
 * stream each) keeps only the recent ones; an evicted stream's next event gets `prev` 0, which
 * makes resuming from before it an error, never a silent gap.
 */
export class SessionSequence {
  private issued = 0;
  /** Map order is write recency: the first key is the least recently written stream. */
  private readonly lastByStream = new Map<string, number>();

  /** The last sequence handed out (0 before the first event). */
  get last(): number {
    return this.issued;
  }

  next(streamId: string): Assigned {
    const seq = ++this.issued;
    const prev = this.lastByStream.get(streamId) ?? 0;
    this.lastByStream.delete(streamId);
    this.lastByStream.set(streamId, seq);
    if (this.lastByStream.size > MAX_TRACKED_STREAMS) {
      const oldest = this.lastByStream.keys().next();
      if (!oldest.done) this.lastByStream.delete(oldest.value);
    }
    return { seq, prev };
  }

  /** The last sequence written on `streamId`, if it is still tracked. */
  lastOf(streamId: string): number | undefined {
    return this.lastByStream.get(streamId);
  }

  /**
   * Records an event another process already wrote (`seq` on `streamId`), in history order: a
   * replica taking a session over continues after it, so no id is reused (cluster takeover).
   */
  observe(streamId: string, seq: number): void {
    if (seq > this.issued) this.issued = seq;
    this.lastByStream.delete(streamId);
    this.lastByStream.set(streamId, seq);
    if (this.lastByStream.size > MAX_TRACKED_STREAMS) {
      const oldest = this.lastByStream.keys().next();
      if (!oldest.done) this.lastByStream.delete(oldest.value);
    }
  }

  /** Forgets every stream (their history is gone); the counter keeps going, so no id is reused. */
  forgetStreams(): void {
    this.lastByStream.clear();
  }
}

/** Why a `Last-Event-ID` cannot be resumed from. */
export type ResumeProblem = 'malformed' | 'unknown' | 'evicted' | 'unavailable';

/** Where a resuming GET may continue, or why it may not. */
export type ResumePoint =
  | { readonly ok: true; readonly streamId: string; readonly seq: number }
  | { readonly ok: false; readonly code: ResumeProblem; readonly message: string };

const PROBLEMS: Readonly<Record<ResumeProblem, string>> = {
  malformed: 'Last-Event-ID is not an event id issued by this gateway',
  unknown: 'Last-Event-ID names no event of this session',
  evicted: 'the events after Last-Event-ID were evicted from the retained history and cannot be replayed',
  unavailable: 'the event history is unavailable right now; retry later',
};

export function resumeProblem(code: ResumeProblem): ResumePoint {
  return { ok: false, code, message: PROBLEMS[code] };
}

/**
 * Judges a parsed resume point from what the store still holds: `next`, the first retained event
 * of that stream after it, and the stream's last sequence. Sound only when nothing of the stream
 * between the point and `next` was evicted, i.e. `next.prev` is the point itself; with nothing
 * retained after it, only when the point is the stream's last event. Pure.
 */
export function judgeResume(
  point: ParsedEventId,
  next: Assigned | undefined,
  lastOnStream: number | undefined,
): ResumePoint {
  if (next !== undefined) {
    if (next.prev === point.seq) return { ok: true, streamId: point.streamId, seq: point.seq };
    // prev 0 means the link was lost (stream no longer tracked): no proof nothing was skipped.
    return resumeProblem(next.prev > point.seq || next.prev === 0 ? 'evicted' : 'unknown');
  }
  if (lastOnStream === undefined || point.seq > lastOnStream) return resumeProblem('unknown');
  return point.seq === lastOnStream ? { ok: true, streamId: point.streamId, seq: point.seq } : resumeProblem('evicted');
}

/** A refused problem of a resume point, for `ResumeRefused`. */
export type RefusedPoint = Extract<ResumePoint, { ok: false }>;

/**
 * Thrown by a store's replay when the resume point turned out unsound while replaying (evicted
 * meanwhile, store unreachable): the transport answers it as `resumePoint` would have (410, 503),
 * never as a bare HTTP 500.
 */
export class ResumeRefused extends Error {
  readonly point: RefusedPoint;

  constructor(point: ResumePoint) {
    const refused: RefusedPoint = point.ok ? (resumeProblem('unknown') as RefusedPoint) : point;
    super(refused.message);
    this.name = 'ResumeRefused';
    this.point = refused;
  }
}
