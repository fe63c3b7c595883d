/**
 * The bounded `text/event-stream` reader of the HTTP+SSE connector, against the WHATWG rules it
 * claims (line ends, fields, comments, dispatch) and its byte bound, whatever the chunking.
 */
import { describe, expect, it } from 'vitest';
import { createSseEventReader, type SseEvent } from '../../src/upstream/sse-events.js';

/** All events of `text` fed in one piece, and fed one byte at a time: both must agree. */
function read(text: string, max = 1024): SseEvent[] {
  const whole = createSseEventReader(max).push(Buffer.from(text));
  const bytewise = createSseEventReader(max);
  const events: SseEvent[] = [];
  for (const byte of Buffer.from(text)) {
    const pushed = bytewise.push(Uint8Array.of(byte));
    if (!pushed.ok) throw new Error('refused bytewise');
    events.push(...pushed.events);
  }
  if (!whole.ok) throw new Error('refused whole');
  expect(events).toEqual(whole.events);
  return whole.events;
}

describe('createSseEventReader', () => {
  const cases: ReadonlyArray<readonly [string, string, SseEvent[]]> = [
    ['a named event', 'event: endpoint\ndata: /messages?sessionId=1\n\n', [{ type: 'endpoint', data: '/messages?sessionId=1' }]],
    ['an unnamed event is a message', 'data: {"a":1}\n\n', [{ type: 'message', data: '{"a":1}' }]],
    ['CRLF line ends', 'event: message\r\ndata: x\r\n\r\n', [{ type: 'message', data: 'x' }]],
    ['CR line ends', 'event: message\rdata: x\r\r', [{ type: 'message', data: 'x' }]],
    ['data lines join with LF', 'data: a\ndata: b\n\n', [{ type: 'message', data: 'a\nb' }]],
    ['one leading space only is dropped', 'data:  two\ndata:none\n\n', [{ type: 'message', data: ' two\nnone' }]],
    ['comments (keep-alives) are skipped', ': keepalive\n\ndata: x\n: more\n\n', [{ type: 'message', data: 'x' }]],
    ['an event without data is not dispatched', 'event: endpoint\n\ndata: x\n\n', [{ type: 'message', data: 'x' }]],
    ['id and retry are ignored', 'id: 7\nretry: 10\ndata: x\n\n', [{ type: 'message', data: 'x' }]],
    ['a field without a colon has an empty value', 'data\n\n', [{ type: 'message', data: '' }]],
    ['a leading BOM is skipped', '\ufeffdata: x\n\n', [{ type: 'message', data: 'x' }]],
    ['an unterminated event is not dispatched', 'data: x\n\ndata: y\n', [{ type: 'message', data: 'x' }]],
    ['multi-byte characters survive any chunking', 'data: héllo ☃\n\n', [{ type: 'message', data: 'héllo ☃' }]],
    ['events in order', 'data: 1\n\nevent: e\ndata: 2\n\ndata: 3\n\n', [
      { type: 'message', data: '1' },
      { type: 'e', data: '2' },
      { type: 'message', data: '3' },
    ]],
  ];

  it.each(cases)('%s', (_label, text, expected) => {
    expect(read(text)).toEqual(expected);
  });

  it('takes a CR at the end of one chunk and an LF opening the next as one line end', () => {
    const reader = createSseEventReader(1024);
    expect(reader.push(Buffer.from('data: x\r'))).toEqual({ ok: true, events: [] });
    expect(reader.push(Buffer.from('\n\r\n'))).toEqual({ ok: true, events: [{ type: 'message', data: 'x' }] });
  });

  it('accepts an event of exactly the cap and refuses one byte more', () => {
    const line = `data: ${'x'.repeat(94)}`; // 100 bytes
    expect(createSseEventReader(100).push(Buffer.from(`${line}\n\n`))).toEqual({ ok: true, events: [{ type: 'message', data: 'x'.repeat(94) }] });
    expect(createSseEventReader(99).push(Buffer.from(`${line}\n\n`))).toEqual({ ok: false, code: 'EVENT_TOO_LARGE' });
  });

  it('refuses an endless line before it ends, however it is chunked', () => {
    const reader = createSseEventReader(1024);
    let refused = false;
    for (let i = 0; i < 100 && !refused; i++) refused = !reader.push(Buffer.from('x'.repeat(64))).ok;
    expect(refused).toBe(true);
  });

  it('counts every data line of one event against the cap, and starts afresh after a dispatch', () => {
    const many = 'data: 123456789\n'.repeat(10); // 150 bytes of kept lines
    expect(createSseEventReader(140).push(Buffer.from(`${many}\n`))).toEqual({ ok: false, code: 'EVENT_TOO_LARGE' });
    const reader = createSseEventReader(160);
    for (let i = 0; i < 5; i++) {
      const pushed = reader.push(Buffer.from(`${many}\n`));
      expect(pushed.ok && pushed.events.length).toBe(1);
    }
  });

  it('does not count comments against the cap', () => {
    const reader = createSseEventReader(64);
    for (let i = 0; i < 100; i++) expect(reader.push(Buffer.from(': keepalive keepalive keepalive\n')).ok).toBe(true);
  });
});
