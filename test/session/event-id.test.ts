import { describe, expect, it } from 'vitest';
import {
  formatEventId,
  judgeResume,
  MAX_TRACKED_STREAMS,
  parseEventId,
  SessionSequence,
  type Assigned,
} from '../../src/session/event-id.js';

describe('parseEventId', () => {
  it.each([
    ['abc::1', { streamId: 'abc', seq: 1 }],
    ['_GET_stream::42', { streamId: '_GET_stream', seq: 42 }],
    ['a::b::7', { streamId: 'a::b', seq: 7 }],
    ['9f1c2e4a-0000-4000-8000-000000000000::123456789012345', { streamId: '9f1c2e4a-0000-4000-8000-000000000000', seq: 123456789012345 }],
  ])('reads %s', (id, expected) => {
    expect(parseEventId(id)).toEqual(expected);
  });

  it.each([
    ['', 'empty'],
    ['abc', 'no separator'],
    ['::5', 'no stream'],
    ['abc::', 'no sequence'],
    ['abc::0', 'sequence 0'],
    ['abc::-1', 'negative'],
    ['abc::01', 'leading zero'],
    ['abc::1e3', 'exponent'],
    ['abc::1.5', 'fraction'],
    ['abc:: 1', 'space'],
    ['abc::99999999999999999', 'beyond a safe integer'],
    ['_GET_stream_1712345678901', 'the SDK example store format'],
    [`${'x'.repeat(300)}::1`, 'too long'],
  ])('refuses %j (%s)', (id) => {
    expect(parseEventId(id)).toBeUndefined();
  });

  it('round-trips what formatEventId writes', () => {
    expect(parseEventId(formatEventId('s-1', 17))).toEqual({ streamId: 's-1', seq: 17 });
  });
});

describe('SessionSequence', () => {
  it('numbers every event of the session once, links each to the previous one of its stream', () => {
    const sequence = new SessionSequence();
    expect([sequence.next('a'), sequence.next('b'), sequence.next('a'), sequence.next('a')]).toEqual([
      { seq: 1, prev: 0 },
      { seq: 2, prev: 0 },
      { seq: 3, prev: 1 },
      { seq: 4, prev: 3 },
    ]);
    expect(sequence.last).toBe(4);
    expect(sequence.lastOf('b')).toBe(2);
  });

  it('tracks a bounded number of streams, forgetting the least recently written', () => {
    const sequence = new SessionSequence();
    sequence.next('first');
    for (let i = 0; i < MAX_TRACKED_STREAMS; i += 1) sequence.next(`s${i}`);
    expect(sequence.lastOf('first')).toBeUndefined();
    expect(sequence.lastOf(`s${MAX_TRACKED_STREAMS - 1}`)).toBe(MAX_TRACKED_STREAMS + 1);
    // An untracked stream starts a new chain: prev 0, never a reused sequence.
    expect(sequence.next('first')).toEqual({ seq: MAX_TRACKED_STREAMS + 2, prev: 0 });
  });

  it('keeps counting after forgetting its streams', () => {
    const sequence = new SessionSequence();
    sequence.next('a');
    sequence.forgetStreams();
    expect(sequence.lastOf('a')).toBeUndefined();
    expect(sequence.next('a')).toEqual({ seq: 2, prev: 0 });
  });
});

describe('judgeResume', () => {
  const at = (seq: number) => ({ streamId: 's', seq });
  const next = (seq: number, prev: number): Assigned => ({ seq, prev });

  it.each<[string, number, Assigned | undefined, number | undefined, string]>([
    ['the next retained event follows the point directly', 5, next(9, 5), 9, 'ok'],
    ['the point is the last event of its stream', 9, undefined, 9, 'ok'],
    ['events of the stream after the point were evicted', 5, next(9, 7), 9, 'evicted'],
    ['the next event lost its link (stream no longer tracked)', 5, next(9, 0), 9, 'evicted'],
    ['everything after the point was evicted', 5, undefined, 9, 'evicted'],
    ['the point lies between two events of the stream', 6, next(9, 5), 9, 'unknown'],
    ['the point is after the stream’s last event', 12, undefined, 9, 'unknown'],
    ['the stream is not known', 5, undefined, undefined, 'unknown'],
  ])('%s', (_, seq, following, last, expected) => {
    const verdict = judgeResume(at(seq), following, last);
    expect(verdict.ok ? 'ok' : verdict.code).toBe(expected);
  });
});
