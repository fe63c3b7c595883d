/**
 * The one shutdown list of a composition (composition/closers.ts): closers run once, last opened
 * first, each after the one before has finished; a failing one is logged without its message
 * and the rest still run; a build that throws closes what it opened before the error goes on.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Closers } from '../../src/composition/closers.js';
import { createLogger } from '../../src/observability/logger.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination: stream as never }), lines };
}

describe('Closers', () => {
  it('closes in reverse order of opening, each awaited before the next', async () => {
    const closers = new Closers(capture().logger);
    const events: string[] = [];
    for (const part of ['auth', 'store', 'listener']) {
      closers.add(part, async () => {
        events.push(`${part} closing`);
        await new Promise((resolve) => setImmediate(resolve));
        events.push(`${part} closed`);
      });
    }
    await closers.closeAll();
    expect(events).toEqual(['listener closing', 'listener closed', 'store closing', 'store closed', 'auth closing', 'auth closed']);
  });

  it('runs every closer once however often it is closed, and refuses a part opened after shutdown began', async () => {
    const closers = new Closers(capture().logger);
    let closed = 0;
    closers.add('part', () => void closed++);
    await Promise.all([closers.closeAll(), closers.closeAll()]);
    await closers.closeAll();
    expect(closed).toBe(1);
    expect(() => closers.add('late', () => undefined)).toThrow(/after shutdown began/);
  });

  it('goes on past a closer that fails, logging the part and the error name only', async () => {
    const { logger, lines } = capture();
    const closers = new Closers(logger);
    const closed: string[] = [];
    closers.add('first', () => void closed.push('first'));
    closers.add('broken', () => {
      throw new TypeError('secret https://user:pw@example.invalid/');
    });
    closers.add('last', () => void closed.push('last'));
    await closers.closeAll();
    expect(closed).toEqual(['last', 'first']);
    const warning = lines.find((line) => line.msg === 'closing a part failed');
    expect(warning).toMatchObject({ part: 'broken', err: 'TypeError' });
    expect(JSON.stringify(lines)).not.toContain('secret');
  });

  it('closes what a failed build opened, then rethrows its error', async () => {
    const closers = new Closers(capture().logger);
    const closed: string[] = [];
    const failure = new Error('port in use');
    await expect(
      closers.compose(async (c) => {
        c.add('auth', () => void closed.push('auth'));
        c.add('store', () => void closed.push('store'));
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(closed).toEqual(['store', 'auth']);
  });
});
