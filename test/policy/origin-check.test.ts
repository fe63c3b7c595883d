import { describe, expect, it } from 'vitest';
import {
  compileOriginCheck,
  isCanonicalOrigin,
  loopbackOrigins,
  type OriginCheckCode,
} from '../../src/policy/origin-check.js';

type Outcome = 'ok' | OriginCheckCode;

function outcome(result: ReturnType<ReturnType<typeof compileOriginCheck>>): Outcome {
  return result.ok ? 'ok' : result.code;
}

describe('compileOriginCheck with the default (empty) allowlist', () => {
  const check = compileOriginCheck();

  it('lets a request without Origin through (desktop and CLI clients)', () => {
    expect(outcome(check([]))).toBe('ok');
  });

  const vectors: readonly (readonly [string, Outcome])[] = [
    ['http://127.0.0.1:8787', 'ORIGIN_NOT_ALLOWED'],
    ['http://localhost:8787', 'ORIGIN_NOT_ALLOWED'],
    ['https://evil.example.com', 'ORIGIN_NOT_ALLOWED'],
    ['null', 'ORIGIN_NOT_ALLOWED'],
    ['', 'ORIGIN_MALFORMED'],
  ];

  it.each(vectors)('judges Origin %j as %s', (value, expected) => {
    expect(outcome(check([value]))).toBe(expected);
  });
});

describe('compileOriginCheck with an allowlist', () => {
  const allowed = ['http://localhost:8787', 'https://app.example.com', 'http://[::1]:8787'];
  const check = compileOriginCheck(allowed);

  const vectors: readonly (readonly [string, Outcome])[] = [
    ['http://localhost:8787', 'ok'],
    ['https://app.example.com', 'ok'],
    ['http://[::1]:8787', 'ok'],
    // well-formed but not listed
    ['http://localhost:8788', 'ORIGIN_NOT_ALLOWED'],
    ['https://localhost:8787', 'ORIGIN_NOT_ALLOWED'],
    ['http://app.example.com', 'ORIGIN_NOT_ALLOWED'],
    ['https://app.example.com:8443', 'ORIGIN_NOT_ALLOWED'],
    ['https://evil.app.example.com', 'ORIGIN_NOT_ALLOWED'],
    ['https://app.example.com.evil.com', 'ORIGIN_NOT_ALLOWED'],
    ['http://127.0.0.1:8787', 'ORIGIN_NOT_ALLOWED'],
    ['null', 'ORIGIN_NOT_ALLOWED'],
    // not canonical: refused, never normalised into an allowed entry
    ['HTTP://LOCALHOST:8787', 'ORIGIN_MALFORMED'],
    ['http://LocalHost:8787', 'ORIGIN_MALFORMED'],
    ['http://localhost:8787/', 'ORIGIN_MALFORMED'],
    ['http://localhost:8787/mcp', 'ORIGIN_MALFORMED'],
    ['https://app.example.com:443', 'ORIGIN_MALFORMED'],
    ['https://app.example.com.', 'ORIGIN_NOT_ALLOWED'],
    ['http://user@localhost:8787', 'ORIGIN_MALFORMED'],
    ['http://localhost:8787?x', 'ORIGIN_MALFORMED'],
    ['http://localhost:8787#x', 'ORIGIN_MALFORMED'],
    [' http://localhost:8787', 'ORIGIN_MALFORMED'],
    ['http://localhost:8787 ', 'ORIGIN_MALFORMED'],
    ['http://[0:0:0:0:0:0:0:1]:8787', 'ORIGIN_MALFORMED'],
    ['http://0x7f.1:8787', 'ORIGIN_MALFORMED'],
    ['localhost:8787', 'ORIGIN_MALFORMED'],
    ['//localhost:8787', 'ORIGIN_MALFORMED'],
    ['file:///etc/passwd', 'ORIGIN_MALFORMED'],
    ['file://', 'ORIGIN_MALFORMED'],
    ['blob:https://app.example.com/1234', 'ORIGIN_MALFORMED'],
    ['data:text/html;hi', 'ORIGIN_MALFORMED'],
    ['Null', 'ORIGIN_MALFORMED'],
    ['*', 'ORIGIN_MALFORMED'],
    ['', 'ORIGIN_MALFORMED'],
    // joined duplicates
    ['http://localhost:8787, https://evil.example.com', 'ORIGIN_DUPLICATED'],
  ];

  it.each(vectors)('judges Origin %j as %s', (value, expected) => {
    expect(outcome(check([value]))).toBe(expected);
  });

  it('refuses a duplicated Origin header even when both lines are allowed', () => {
    expect(outcome(check(['http://localhost:8787', 'http://localhost:8787']))).toBe('ORIGIN_DUPLICATED');
    expect(outcome(check(['https://app.example.com', 'null']))).toBe('ORIGIN_DUPLICATED');
  });

  it('never echoes the received value in its message', () => {
    const secret = 'attacker-chosen-7f3a';
    for (const lines of [[`https://${secret}.com`], [`HTTPS://${secret}`], [`a, ${secret}`], [secret, secret]]) {
      const result = check(lines);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).not.toContain(secret);
    }
  });
});

describe('the opaque origin null', () => {
  it('is admitted only when listed', () => {
    expect(outcome(compileOriginCheck(['null'])(['null']))).toBe('ok');
    expect(outcome(compileOriginCheck(['https://a.example'])(['null']))).toBe('ORIGIN_NOT_ALLOWED');
  });
});

describe('compileOriginCheck refuses non-canonical allowlist entries at compile time', () => {
  const badEntries = [
    'http://localhost:8787/',
    'HTTP://localhost',
    'http://localhost:80',
    'https://example.com/path',
    'localhost:8787',
    '*',
    '',
    'NULL',
    'file:///x',
  ];

  it.each(badEntries)('throws TypeError for %j', (entry) => {
    expect(() => compileOriginCheck([entry])).toThrow(TypeError);
  });

  it('does not echo the entry in the TypeError', () => {
    expect(() => compileOriginCheck(['https://secret.example/path'])).toThrow(/^(?!.*secret)/);
  });
});

describe('isCanonicalOrigin', () => {
  const vectors: readonly (readonly [string, boolean])[] = [
    ['https://example.com', true],
    ['http://localhost:8787', true],
    ['http://[::1]:8787', true],
    ['http://localhost:80', false],
    ['https://example.com/', false],
    ['null', false],
    ['not a url', false],
  ];

  it.each(vectors)('judges %j canonical: %s', (value, expected) => {
    expect(isCanonicalOrigin(value)).toBe(expected);
  });
});

describe('loopbackOrigins', () => {
  it('lists the three loopback origins of a port', () => {
    expect(loopbackOrigins(8787)).toEqual(['http://127.0.0.1:8787', 'http://localhost:8787', 'http://[::1]:8787']);
  });

  it('omits the default port, as browsers do', () => {
    expect(loopbackOrigins(80)).toEqual(['http://127.0.0.1', 'http://localhost', 'http://[::1]']);
  });

  it('produces entries the check accepts and that admit browsers on loopback', () => {
    const check = compileOriginCheck(loopbackOrigins(3000));
    expect(outcome(check(['http://localhost:3000']))).toBe('ok');
    expect(outcome(check(['http://localhost:3001']))).toBe('ORIGIN_NOT_ALLOWED');
  });

  it.each([0, -1, 65_536, 1.5, Number.NaN])('throws TypeError for port %s', (port) => {
    expect(() => loopbackOrigins(port)).toThrow(TypeError);
  });
});
