import { describe, expect, it } from 'vitest';
import { createLineSplitter } from '../../src/upstream/line-splitter.js';
import {
  createAutoDecoder,
  createContentLengthDecoder,
  createNdjsonDecoder,
  detectFraming,
  encodeContentLengthProbe,
  encodeMessage,
  type DecodeEvent,
  type MessageDecoder,
} from '../../src/upstream/framing.js';

const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
const unicode = { jsonrpc: '2.0', id: 'é', result: { text: 'héllo wörld — 🎉 ✓ 日本語' } };

function feed(decoder: MessageDecoder, ...chunks: (string | Uint8Array)[]): DecodeEvent[] {
  return chunks.flatMap((chunk) => decoder.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
}

function messages(events: DecodeEvent[]): unknown[] {
  return events.flatMap((event) => (event.kind === 'message' ? [event.value] : []));
}

/** Every way of cutting `bytes` in two, plus one byte at a time. */
function splits(bytes: Buffer): Buffer[][] {
  const cuts = [];
  for (let i = 0; i <= bytes.length; i++) cuts.push([bytes.subarray(0, i), bytes.subarray(i)]);
  cuts.push([...bytes].map((byte) => Buffer.from([byte])));
  return cuts;
}

describe('ndjson decoder', () => {
  it.each([
    ['one message per line', '{"a":1}\n{"b":2}\n', [{ a: 1 }, { b: 2 }]],
    ['CRLF line ends', '{"a":1}\r\n{"b":2}\r\n', [{ a: 1 }, { b: 2 }]],
    ['blank and whitespace-only lines', '\n  \r\n{"a":1}\n\t\n', [{ a: 1 }]],
    ['surrounding whitespace', '  {"a":1}  \n', [{ a: 1 }]],
    ['an unterminated last line (held back)', '{"a":1}\n{"b":2}', [{ a: 1 }]],
  ])('decodes %s', (_name, input, expected) => {
    expect(messages(feed(createNdjsonDecoder(), input))).toEqual(expected);
  });

  it('decodes the same messages however the bytes are split, inside multi-byte characters too', () => {
    const bytes = Buffer.concat([encodeMessage(ping, 'ndjson'), encodeMessage(unicode, 'ndjson')]);
    for (const chunks of splits(bytes)) {
      expect(messages(feed(createNdjsonDecoder(), ...chunks))).toEqual([ping, unicode]);
    }
  });

  it('skips a banner line as noise and goes on', () => {
    const events = feed(createNdjsonDecoder(), 'Server v1.2 listening on stdio\n{"a":1}\n');
    expect(events).toEqual([
      { kind: 'noise', bytes: 30, preview: 'Server v1.2 listening on stdio' },
      { kind: 'message', value: { a: 1 }, bytes: 7 },
    ]);
  });

  it('reports a malformed JSON line by size only and goes on', () => {
    const events = feed(createNdjsonDecoder(), '{"token":"s3cret", oops\n{"a":1}\n');
    expect(events).toEqual([
      { kind: 'invalid', bytes: 23 },
      { kind: 'message', value: { a: 1 }, bytes: 7 },
    ]);
    expect(JSON.stringify(events)).not.toContain('s3cret');
  });

  it('accepts a line of exactly maxMessageBytes', () => {
    const line = `{"p":"${'x'.repeat(10)}"}`;
    expect(messages(feed(createNdjsonDecoder({ maxMessageBytes: line.length }), `${line}\r\n`))).toEqual([
      { p: 'x'.repeat(10) },
    ]);
  });

  it.each([
    ['in one chunk', [`{"p":"${'x'.repeat(100)}"}\n`]],
    ['without a newline yet', [`{"p":"${'x'.repeat(100)}`]],
    ['across many chunks', Array.from({ length: 20 }, () => 'xxxxxxxx')],
  ])('fails for good on a line over maxMessageBytes %s', (_name, chunks) => {
    const decoder = createNdjsonDecoder({ maxMessageBytes: 64 });
    const events = feed(decoder, ...chunks);
    expect(events.at(-1)).toMatchObject({ kind: 'fatal', reason: 'too-large' });
    expect(decoder.failed).toBe(true);
    expect(feed(decoder, '{"a":1}\n')).toEqual([]);
  });
});

describe('Content-Length decoder', () => {
  const frame = (body: string, headers = `Content-Length: ${Buffer.byteLength(body)}`) => `${headers}\r\n\r\n${body}`;

  it.each([
    ['one message', frame('{"a":1}'), [{ a: 1 }]],
    ['back-to-back messages', frame('{"a":1}') + frame('{"b":2}'), [{ a: 1 }, { b: 2 }]],
    ['a lower-case header name', frame('{"a":1}', 'content-length: 7'), [{ a: 1 }]],
    ['other headers around it', frame('{"a":1}', 'Content-Type: application/json\r\nCONTENT-LENGTH:7\r\nX-Foo: bar'), [{ a: 1 }]],
    ['newlines between messages', `${frame('{"a":1}')}\r\n\n${frame('{"b":2}')}\n`, [{ a: 1 }, { b: 2 }]],
    ['bare LF header lines', 'Content-Length: 7\n\n{"a":1}', [{ a: 1 }]],
    ['a body with trailing whitespace', frame('{"a":1}\n'), [{ a: 1 }]],
  ])('decodes %s', (_name, input, expected) => {
    expect(messages(feed(createContentLengthDecoder(), input))).toEqual(expected);
  });

  it('decodes the same messages however the bytes are split, inside headers and characters too', () => {
    const bytes = Buffer.concat([encodeMessage(unicode, 'contentLength'), encodeMessage(ping, 'contentLength')]);
    for (const chunks of splits(bytes)) {
      expect(messages(feed(createContentLengthDecoder(), ...chunks))).toEqual([unicode, ping]);
    }
  });

  it('counts Content-Length in bytes, not characters', () => {
    const encoded = encodeMessage(unicode, 'contentLength').toString('latin1');
    const declared = Number(/Content-Length: (\d+)/.exec(encoded)?.[1]);
    expect(declared).toBe(Buffer.byteLength(JSON.stringify(unicode)));
  });

  it('reports an unparseable body by size only and goes on', () => {
    const events = feed(createContentLengthDecoder(), frame('{"token":"s3cret",}') + frame('{"a":1}'));
    expect(events).toEqual([
      { kind: 'invalid', bytes: 19 },
      { kind: 'message', value: { a: 1 }, bytes: 7 },
    ]);
  });

  it.each([
    ['no Content-Length', 'Content-Type: application/json\r\n\r\n{}', 'bad-header'],
    ['a non-numeric length', 'Content-Length: 12abc\r\n\r\n{}', 'bad-header'],
    ['a negative length', 'Content-Length: -2\r\n\r\n{}', 'bad-header'],
    ['conflicting lengths', 'Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 'bad-header'],
    ['a header line without a colon', 'hello there\r\nContent-Length: 2\r\n\r\n{}', 'bad-header'],
    ['an endless header block', `X-Pad: ${'y'.repeat(9000)}`, 'bad-header'],
    ['a length over maxMessageBytes (before any body arrives)', 'Content-Length: 65\r\n\r\n', 'too-large'],
  ])('fails for good on %s', (_name, input, reason) => {
    const decoder = createContentLengthDecoder({ maxMessageBytes: 64 });
    expect(feed(decoder, input).at(-1)).toMatchObject({ kind: 'fatal', reason });
    expect(decoder.failed).toBe(true);
    expect(feed(decoder, frame('{"a":1}'))).toEqual([]);
  });
});

describe('auto detection', () => {
  it.each([
    ['{"a":1}\n', 'ndjson'],
    ['  \r\n{"a":1}\n', 'ndjson'],
    ['Server starting\n', 'ndjson'],
    ['Content-Length: 2\r\n\r\n{}', 'contentLength'],
    ['\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}', 'contentLength'],
    ['CONTENT-LENGTH : 2\r\n\r\n{}', 'contentLength'],
    ['Contents of the banner\n', 'ndjson'],
  ])('detects the framing of %j', (input, framing) => {
    const events = feed(createAutoDecoder(), input);
    expect(events[0]).toEqual({ kind: 'detected', framing });
  });

  it('waits while the bytes could still be the start of a header', () => {
    const decoder = createAutoDecoder();
    expect(feed(decoder, '\n', 'Con', 'tent-Len')).toEqual([]);
    expect(feed(decoder, 'gth: 7\r\n\r\n{"a":1}')).toEqual([
      { kind: 'detected', framing: 'contentLength' },
      { kind: 'message', value: { a: 1 }, bytes: 7 },
    ]);
  });

  it.each([
    ['', undefined],
    ['c', undefined],
    ['Content-', undefined],
    ['Content-Length', undefined],
    ['Content-Length:', 'contentLength'],
    ['Cx', 'ndjson'],
    ['{', 'ndjson'],
    [`Content-${'a'.repeat(40)}`, 'ndjson'],
  ])('detectFraming(%j) is %s', (prefix, expected) => {
    expect(detectFraming(Buffer.from(prefix))).toBe(expected);
  });

  it('decodes everything after detection with the detected framing', () => {
    const bytes = Buffer.concat([encodeMessage(ping, 'contentLength'), encodeMessage(unicode, 'contentLength')]);
    for (const chunks of splits(bytes)) {
      expect(messages(feed(createAutoDecoder(), ...chunks))).toEqual([ping, unicode]);
    }
  });
});

describe('encoders', () => {
  it.each(['ndjson', 'contentLength'] as const)('round-trips through the %s decoder', (framing) => {
    const decoder = framing === 'ndjson' ? createNdjsonDecoder() : createContentLengthDecoder();
    expect(messages(decoder.push(encodeMessage(unicode, framing)))).toEqual([unicode]);
  });

  it('writes one line per message in ndjson, escaping newlines inside strings', () => {
    const text = encodeMessage({ s: 'a\nb' }, 'ndjson').toString();
    expect(text).toBe('{"s":"a\\nb"}\n');
  });

  it('throws on a value JSON cannot represent', () => {
    expect(() => encodeMessage(undefined, 'ndjson')).toThrow(TypeError);
  });

  /**
   * A reader shaped like vscode-jsonrpc's: header block up to CRLF CRLF, lines split on CRLF,
   * key before the first colon, unknown keys ignored.
   */
  function lspRead(bytes: Buffer): unknown[] {
    const out: unknown[] = [];
    let rest = bytes;
    for (let end = rest.indexOf('\r\n\r\n'); end !== -1; end = rest.indexOf('\r\n\r\n')) {
      const headers = new Map(
        rest
          .toString('utf8', 0, end)
          .split('\r\n')
          .map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const length = Number(headers.get('content-length'));
      if (!Number.isInteger(length)) throw new Error('no Content-Length');
      out.push(JSON.parse(rest.toString('utf8', end + 4, end + 4 + length)));
      rest = rest.subarray(end + 4 + length);
    }
    return out;
  }

  it('shapes the Content-Length re-send so an LSP-style reader that got the ndjson line first decodes it once', () => {
    expect(lspRead(Buffer.concat([encodeMessage(ping, 'ndjson'), encodeContentLengthProbe(ping)]))).toEqual([ping]);
    expect(messages(createContentLengthDecoder().push(encodeContentLengthProbe(unicode)))).toEqual([unicode]);
  });

  it('shapes the Content-Length re-send so an ndjson reader sees no second message and no dangling line', () => {
    const decoder = createNdjsonDecoder();
    const events = decoder.push(
      Buffer.concat([encodeMessage(ping, 'ndjson'), encodeContentLengthProbe(ping), encodeMessage(unicode, 'ndjson')]),
    );
    expect(messages(events)).toEqual([ping, unicode]);
  });
});

describe('line splitter (stderr)', () => {
  it('splits lines across chunks, drops CR and blank lines, and returns the tail at the end', () => {
    const splitter = createLineSplitter();
    expect(splitter.push(Buffer.from('one\r\ntw'))).toEqual(['one']);
    expect(splitter.push(Buffer.from('o\n\n  \nthr'))).toEqual(['two']);
    expect(splitter.end()).toEqual(['thr']);
    expect(splitter.end()).toEqual([]);
  });

  it('keeps multi-byte characters split across chunks whole', () => {
    const bytes = Buffer.from('héllo 🎉\n');
    for (const chunks of splits(bytes)) {
      const splitter = createLineSplitter();
      expect(chunks.flatMap((chunk) => splitter.push(chunk))).toEqual(['héllo 🎉']);
    }
  });

  it('truncates an over-long line and resumes at the next one', () => {
    const splitter = createLineSplitter(8);
    expect(splitter.push(Buffer.from('0123456789abcdef'))).toEqual([]);
    expect(splitter.push(Buffer.from('ghij\nnext\n'))).toEqual(['01234567…[truncated]', 'next']);
  });
});
