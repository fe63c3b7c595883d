/**
 * Bounded reads of upstream bodies: whole reads up to a cap, bodies cut at a cap, and event
 * streams whose every event is bounded (whole events passed on, an over-long one replaced), plus
 * one hop through a real HTTP server on 127.0.0.1 whose gzip'd JSON answer inflates past the cap.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { readBounded, truncateBody } from '../../src/net/bounded-body.js';
import { dispatchHop } from '../../src/net/dispatch-hop.js';
import { boundEventStream } from '../../src/net/sse-event-bound.js';

function source(chunks: Array<string | Buffer>): Readable {
  return Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)), { objectMode: false });
}

async function collect(stream: Readable): Promise<{ text: string; error?: Error }> {
  const parts: Buffer[] = [];
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) parts.push(chunk);
    return { text: Buffer.concat(parts).toString() };
  } catch (error) {
    return { text: Buffer.concat(parts).toString(), error: error as Error };
  }
}

const REPLACED = Buffer.from('event: message\ndata: replaced\n\n');

describe('readBounded', () => {
  it('reads a body of exactly the cap and refuses one byte more, destroying the source', async () => {
    expect((await readBounded(source(['ab', 'cd']), 4))?.toString()).toBe('abcd');
    const over = source(['ab', 'cd', 'e']);
    expect(await readBounded(over, 4)).toBeUndefined();
    expect(over.destroyed).toBe(true);
  });
});

describe('truncateBody', () => {
  it('passes a body up to the cap and ends it there, destroying the source', async () => {
    const body = source(['0123456789', 'abcdefghij', 'never read']);
    expect((await collect(truncateBody(body, 15))).text).toBe('0123456789abcde');
    expect(body.destroyed).toBe(true);
  });

  it('passes a body under the cap whole', async () => {
    expect((await collect(truncateBody(source(['short']), 1024))).text).toBe('short');
  });
});

describe('boundEventStream', () => {
  const cases: Array<[string, Array<string>, string]> = [
    ['LF line ends', ['data: a\n\ndata: b\n\n'], 'data: a\n\ndata: b\n\n'],
    ['CRLF line ends split across chunks', ['data: a\r', '\n\r\ndata: b\r\n', '\r\n'], 'data: a\r\n\r\ndata: b\r\n\r\n'],
    ['CR line ends', ['data: a\r\rdata: b\r\r'], 'data: a\r\rdata: b\r\r'],
    ['an event split byte by byte', [...'id: 1\ndata: x\n\n'], 'id: 1\ndata: x\n\n'],
  ];
  it.each(cases)('passes whole events through unchanged (%s)', async (_name, chunks, expected) => {
    expect(await collect(boundEventStream(source(chunks), 64, () => REPLACED))).toEqual({ text: expected });
  });

  it('accepts an event of exactly the cap', async () => {
    const event = `data: ${'x'.repeat(64 - 8)}\n\n`; // 64 bytes with its blank line
    expect((await collect(boundEventStream(source([event]), 64, () => REPLACED))).text).toBe(event);
  });

  it('replaces an event one byte over the cap, after the whole events before it', async () => {
    const body = source(['data: ok\n\n', `data: ${'x'.repeat(64 - 7)}\n\n`, 'data: never\n\n']);
    expect((await collect(boundEventStream(body, 64, () => REPLACED))).text).toBe(`data: ok\n\n${REPLACED.toString()}`);
    expect(body.destroyed).toBe(true);
  });

  it('refuses an endless line without buffering it, failing with the error it is given', async () => {
    const endless = Readable.from(
      (function* () {
        yield Buffer.from('data: ');
        for (let i = 0; i < 1_000_000; i += 1) yield Buffer.alloc(1024, 0x78);
      })(),
    );
    const result = await collect(boundEventStream(endless, 64 * 1024, () => new Error('too large')));
    expect(result).toEqual({ text: '', error: new Error('too large') });
    expect(endless.destroyed).toBe(true);
  });

  it('refuses an over-long event that arrives whole inside one large chunk', async () => {
    const chunk = `data: ok\n\ndata: ${'x'.repeat(200)}\n\ndata: after\n\n`;
    expect((await collect(boundEventStream(source([chunk]), 64, () => REPLACED))).text).toBe(`data: ok\n\n${REPLACED.toString()}`);
  });

  it('counts comment-only keep-alives as events of their own', async () => {
    const chunks = Array.from({ length: 100 }, () => ': keepalive\n\n');
    expect((await collect(boundEventStream(source(chunks), 64, () => REPLACED))).text).toBe(chunks.join(''));
  });
});

describe('dispatchHop with a compressed answer', () => {
  it('refuses a gzip’d JSON answer that inflates past the cap (a decompression bomb)', async () => {
    const bomb = gzipSync(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"pad":"${'0'.repeat(8 * 1024 * 1024)}"}}`));
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dispatcher = new Agent();
    try {
      const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
      const hop = dispatchHop({ server: 'bomb', dispatcher, url, method: 'POST', init: { body: '{}' }, limits: { maxMessageBytes: 1024 * 1024, maxOtherBodyBytes: 1024 } });
      await expect(hop).rejects.toMatchObject({ code: 'UPSTREAM_MESSAGE_TOO_LARGE', server: 'bomb' });
    } finally {
      await dispatcher.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
