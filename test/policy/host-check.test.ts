import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ALLOWED_HOSTS,
  checkRequestTarget,
  compileHostCheck,
  type HostCheckCode,
} from '../../src/policy/host-check.js';

const checkDefault = compileHostCheck();

function outcome(result: ReturnType<typeof checkDefault>): 'ok' | HostCheckCode {
  return result.ok ? 'ok' : result.code;
}

describe('compileHostCheck with the default allowlist', () => {
  it('allows loopback hosts only by default', () => {
    expect([...DEFAULT_ALLOWED_HOSTS]).toEqual(['127.0.0.1', 'localhost', '[::1]']);
  });

  const vectors: readonly (readonly [string, 'ok' | HostCheckCode])[] = [
    // allowed: port-agnostic, case-insensitive, one trailing dot tolerated
    ['localhost', 'ok'],
    ['localhost:8787', 'ok'],
    ['LOCALHOST:8787', 'ok'],
    ['LocalHost', 'ok'],
    ['localhost.', 'ok'],
    ['localhost.:8787', 'ok'],
    ['127.0.0.1', 'ok'],
    ['127.0.0.1:1', 'ok'],
    ['127.0.0.1:65535', 'ok'],
    ['[::1]', 'ok'],
    ['[::1]:8080', 'ok'],
    // not allowed: other names and other spellings of loopback (exact match only)
    ['evil.example.com', 'HOST_NOT_ALLOWED'],
    ['evil.example.com:8787', 'HOST_NOT_ALLOWED'],
    ['localhost.evil.com', 'HOST_NOT_ALLOWED'],
    ['evil.localhost', 'HOST_NOT_ALLOWED'],
    ['localhostx', 'HOST_NOT_ALLOWED'],
    ['127.0.0.2', 'HOST_NOT_ALLOWED'],
    ['127.1', 'HOST_NOT_ALLOWED'],
    ['2130706433', 'HOST_NOT_ALLOWED'],
    ['0.0.0.0', 'HOST_NOT_ALLOWED'],
    ['[::ffff:127.0.0.1]', 'HOST_NOT_ALLOWED'],
    ['[0:0:0:0:0:0:0:1]', 'HOST_NOT_ALLOWED'],
    ['[::2]:80', 'HOST_NOT_ALLOWED'],
    // empty
    ['', 'HOST_MISSING'],
    ['   ', 'HOST_MISSING'],
    // joined duplicates (@hono/node-server and Fetch Headers join repeated lines)
    ['localhost, evil.example.com', 'HOST_DUPLICATED'],
    ['localhost,localhost', 'HOST_DUPLICATED'],
    // malformed: whitespace, userinfo, paths, bad ports, bad labels, bad IPv6
    [' localhost', 'HOST_MALFORMED'],
    ['localhost ', 'HOST_MALFORMED'],
    ['local host', 'HOST_MALFORMED'],
    ['localhost\t', 'HOST_MALFORMED'],
    ['user@localhost', 'HOST_MALFORMED'],
    ['evil.com@localhost', 'HOST_MALFORMED'],
    ['localhost@evil.com', 'HOST_MALFORMED'],
    ['localhost/path', 'HOST_MALFORMED'],
    ['localhost?x', 'HOST_MALFORMED'],
    ['localhost#x', 'HOST_MALFORMED'],
    ['localhost\\evil', 'HOST_MALFORMED'],
    ['local%68ost', 'HOST_MALFORMED'],
    ['http://localhost', 'HOST_MALFORMED'],
    ['localhost:', 'HOST_MALFORMED'],
    ['localhost:0', 'HOST_MALFORMED'],
    ['localhost:08787', 'HOST_MALFORMED'],
    ['localhost:65536', 'HOST_MALFORMED'],
    ['localhost:123456', 'HOST_MALFORMED'],
    ['localhost:80a', 'HOST_MALFORMED'],
    ['localhost:-1', 'HOST_MALFORMED'],
    ['localhost:80:80', 'HOST_MALFORMED'],
    ['localhost..', 'HOST_MALFORMED'],
    ['.localhost', 'HOST_MALFORMED'],
    ['a..localhost', 'HOST_MALFORMED'],
    ['::1', 'HOST_MALFORMED'],
    ['[::1', 'HOST_MALFORMED'],
    ['::1]', 'HOST_MALFORMED'],
    ['[::1]:', 'HOST_MALFORMED'],
    ['[::1]x', 'HOST_MALFORMED'],
    ['[::1]:99999', 'HOST_MALFORMED'],
    ['[fe80::1%eth0]', 'HOST_MALFORMED'],
    ['[not:an:ip:::]', 'HOST_MALFORMED'],
    ['[localhost]', 'HOST_MALFORMED'],
    ['loc\u0430lhost', 'HOST_MALFORMED'],
    ['localhost\r\nX-Evil: 1', 'HOST_MALFORMED'],
  ];

  it.each(vectors)('judges Host %j as %s', (value, expected) => {
    expect(outcome(checkDefault([value]))).toBe(expected);
  });

  it('refuses a request without a Host header', () => {
    expect(outcome(checkDefault([]))).toBe('HOST_MISSING');
  });

  it('refuses a duplicated Host header even when both lines are allowed', () => {
    expect(outcome(checkDefault(['localhost', 'localhost']))).toBe('HOST_DUPLICATED');
    expect(outcome(checkDefault(['localhost:8787', 'evil.example.com']))).toBe('HOST_DUPLICATED');
  });

  it('never echoes a value that failed the form check, or a repeated one', () => {
    const secret = 'attacker-chosen-value-7f3a';
    for (const value of [secret, `${secret}:1`, `${secret}, x`, `${secret}/x`, `[${secret}]`, `${secret}\u0000`, `${secret}"`]) {
      const result = checkDefault([value, value]);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).not.toContain(secret);
    }
    for (const value of [`${secret}, x`, `${secret}/x`, `[${secret}]`, `${secret}"`]) {
      const result = checkDefault([value]);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).not.toContain(secret);
    }
  });

  it('names a well-formed host that is not allowed, in its compared form, and where to allow it', () => {
    for (const value of ['Attacker-Chosen.Example:8787', 'attacker-chosen.example.']) {
      expect(checkDefault([value])).toEqual({
        ok: false,
        code: 'HOST_NOT_ALLOWED',
        host: 'attacker-chosen.example',
        message: `Host header not allowed: "attacker-chosen.example" is not in the policy's allowedHosts (add it there if clients reach the gateway by this name)`,
      });
    }
  });
});

describe('compileHostCheck with a custom allowlist', () => {
  const check = compileHostCheck(['MCP.Example.com.', '::1', '10.0.0.5', 'gw_1.internal']);

  const vectors: readonly (readonly [string, 'ok' | HostCheckCode])[] = [
    ['mcp.example.com', 'ok'],
    ['MCP.EXAMPLE.COM:443', 'ok'],
    ['mcp.example.com.', 'ok'],
    ['[::1]:9000', 'ok'],
    ['10.0.0.5:8080', 'ok'],
    ['gw_1.internal', 'ok'],
    ['localhost', 'HOST_NOT_ALLOWED'],
    ['127.0.0.1', 'HOST_NOT_ALLOWED'],
    ['sub.mcp.example.com', 'HOST_NOT_ALLOWED'],
    ['example.com', 'HOST_NOT_ALLOWED'],
  ];

  it.each(vectors)('judges Host %j as %s', (value, expected) => {
    expect(outcome(check([value]))).toBe(expected);
  });

  const badEntries: readonly (readonly [string, readonly string[]])[] = [
    ['an empty list', []],
    ['an entry with a port', ['localhost:8787']],
    ['an entry with a scheme', ['http://localhost']],
    ['an entry with a path', ['localhost/mcp']],
    ['an empty entry', ['']],
    ['a wildcard entry', ['*.example.com']],
    ['an entry with whitespace', [' localhost']],
    ['a bracketed entry with a port', ['[::1]:80']],
  ];

  it.each(badEntries)('throws TypeError at compile time for %s', (_name, entries) => {
    expect(() => compileHostCheck(entries)).toThrow(TypeError);
  });
});

describe('checkRequestTarget', () => {
  const vectors: readonly (readonly [string, boolean])[] = [
    ['/mcp', true],
    ['/mcp?x=1', true],
    ['/', true],
    ['//evil.example.com/mcp', true],
    ['*', true],
    ['http://evil.example.com/mcp', false],
    ['https://localhost/mcp', false],
    ['localhost:8787', false],
    ['', false],
  ];

  it.each(vectors)('judges target %j origin-form: %s', (target, expected) => {
    expect(checkRequestTarget(target).ok).toBe(expected);
  });

  it('never echoes the target in its message', () => {
    const result = checkRequestTarget('http://secret-host.example/');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).not.toContain('secret-host');
  });
});
