import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, fixedFieldLogger, Redactor } from '../../src/observability/logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination: destination as unknown as NodeJS.WritableStream };
}

describe('logger redaction', () => {
  it('masks header values by path', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', destination: destination as never });
    logger.info({ headers: { authorization: 'Bearer abcdef' } }, 'request');
    expect(lines.join('')).not.toContain('abcdef');
    expect(lines.join('')).toContain('[redacted]');
  });

  it('masks known secret values anywhere in a line, raw and JSON-escaped', () => {
    const { lines, destination } = capture();
    const secrets = ['tok-"quoted"-secret', 'plain-secret-value'];
    const logger = createLogger({ level: 'info', destination: destination as never, redactor: new Redactor(secrets) });
    logger.info({ stderr: 'child said tok-"quoted"-secret and plain-secret-value' }, 'upstream said plain-secret-value');
    logger.error({ err: new Error('failed with plain-secret-value') }, 'boom');
    const text = lines.join('');
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
    }
    expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(4);
  });

  it('gives fixed-field lines a sibling logger that keeps the level, the destination and masking by value', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'warn', destination: destination as never, redactor: new Redactor(['client-sent-secret']) });
    const rpc = fixedFieldLogger(logger);
    expect(rpc).not.toBe(logger);
    rpc.info({ rpc: 'tools/call' }, 'rpc');
    expect(lines).toEqual([]);
    rpc.warn({ rpc: 'tools/call', name: 'client-sent-secret' }, 'rpc');
    expect(lines.join('')).toContain('"rpc":"tools/call"');
    expect(lines.join('')).not.toContain('client-sent-secret');
    const other = createLogger({ destination: destination as never }).child({ part: 'x' });
    expect(fixedFieldLogger(other)).toBe(other);
  });

  it('leaves lines alone when there is nothing to mask, and skips values too short to mask', () => {
    const redactor = new Redactor(['ab', '']);
    expect(redactor.empty).toBe(true);
    expect(redactor.redact('ab cd')).toBe('ab cd');
  });

  it('masks the longer of two overlapping secrets whole', () => {
    const redactor = new Redactor(['secret', 'secret-longer']);
    expect(redactor.redact('x secret-longer y')).toBe('x [redacted] y');
  });
});
