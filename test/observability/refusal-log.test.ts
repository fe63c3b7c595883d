import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { RefusalLog } from '../../src/observability/refusal-log.js';

describe('RefusalLog', () => {
  it('logs the first refusal of a kind at once, then one line per interval counting the ones in between', () => {
    const lines: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    const log = new RefusalLog(createLogger({ level: 'info', destination: destination as never }), 1_000);
    log.warn('A', { limit: 1 }, 'a refused', 0);
    for (let t = 1; t <= 5; t++) log.warn('A', { limit: 1 }, 'a refused', t * 100);
    log.warn('B', {}, 'b refused', 600);
    log.warn('A', { limit: 1 }, 'a refused', 1_000);
    expect(lines.map((l) => [l.msg, l.refused, l.level])).toEqual([
      ['a refused', 1, 40],
      ['b refused', 1, 40],
      ['a refused', 6, 40],
    ]);
  });
});
