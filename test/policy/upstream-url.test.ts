import { describe, expect, it } from 'vitest';
import { checkEgressUrl, checkUpstreamUrl, type UpstreamUrlCode } from '../../src/policy/upstream-url.js';

type Outcome = 'ok' | UpstreamUrlCode;

const vectors: readonly (readonly [string, Outcome])[] = [
  // https: to anything (address blocking is the egress guard's job)
  ['https://docs.example.com/mcp', 'ok'],
  ['https://docs.example.com:8443/mcp?x=1', 'ok'],
  ['HTTPS://DOCS.EXAMPLE.COM/mcp', 'ok'],
  ['https://10.0.0.5/mcp', 'ok'],
  ['https://[2606:4700::1]/mcp', 'ok'],
  ['https://localhost/mcp', 'ok'],
  // http: to loopback only
  ['http://127.0.0.1:3000/mcp', 'ok'],
  ['http://127.0.0.1/mcp', 'ok'],
  ['http://127.255.255.254/', 'ok'],
  ['http://127.1:3000/', 'ok'],
  ['http://2130706433/', 'ok'],
  ['http://[::1]:3000/mcp', 'ok'],
  ['http://[0:0:0:0:0:0:0:1]/mcp', 'ok'],
  ['http://localhost:3000/mcp', 'ok'],
  ['http://LOCALHOST:3000/mcp', 'ok'],
  ['HTTP://127.0.0.1/', 'ok'],
  ['http://docs.example.com/mcp', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://10.0.0.5/mcp', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://192.168.1.1/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://169.254.169.254/latest/meta-data/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://0.0.0.0:3000/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://128.0.0.1/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://[::ffff:127.0.0.1]/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://[::]/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://[::2]/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://localhost./', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://api.localhost/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://localhost.example.com/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://127.0.0.1.nip.io/', 'URL_HTTP_NOT_LOOPBACK'],
  ['http://example.com#@127.0.0.1/', 'URL_HTTP_NOT_LOOPBACK'],
  // credentials in the URL
  ['https://user:pass@docs.example.com/mcp', 'URL_USERINFO'],
  ['https://token@docs.example.com/mcp', 'URL_USERINFO'],
  ['https://:pass@docs.example.com/mcp', 'URL_USERINFO'],
  ['http://user:pass@127.0.0.1/', 'URL_USERINFO'],
  ['http://evil.example.com@127.0.0.1/', 'URL_USERINFO'],
  // other schemes
  ['ftp://docs.example.com/', 'URL_SCHEME'],
  ['ws://127.0.0.1/', 'URL_SCHEME'],
  ['wss://docs.example.com/', 'URL_SCHEME'],
  ['file:///etc/passwd', 'URL_SCHEME'],
  ['javascript:alert(1)', 'URL_SCHEME'],
  ['data:text/plain,hi', 'URL_SCHEME'],
  ['unix:/var/run/mcp.sock', 'URL_SCHEME'],
  ['gopher://127.0.0.1:6379/_', 'URL_SCHEME'],
  // unparseable
  ['', 'URL_INVALID'],
  ['docs.example.com/mcp', 'URL_INVALID'],
  ['/mcp', 'URL_INVALID'],
  ['https://', 'URL_INVALID'],
  ['http://[::1/', 'URL_INVALID'],
  ['http://256.0.0.1/', 'URL_INVALID'],
  ['https://exa mple.com/', 'URL_INVALID'],
];

describe('checkUpstreamUrl', () => {
  it.each(vectors)('judges %j as %s', (url, expected) => {
    const result = checkUpstreamUrl(url);
    expect(result.ok ? 'ok' : result.code).toBe(expected);
  });

  it('never includes the URL or any part of it in its message', () => {
    const refused = [
      'http://secret-host.example/secret-path?token=secret-query',
      'https://secret-user:secret-pass@secret-host.example/',
      'ftp://secret-host.example/',
      'secret-host.example/secret-path',
    ];
    for (const url of refused) {
      const result = checkUpstreamUrl(url);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).not.toMatch(/secret/);
    }
  });
});

describe('checkEgressUrl for the gateway\'s own connections', () => {
  const redis = (url: string, plaintextBeyondLoopback = false) => {
    const result = checkEgressUrl(url, { protocol: 'redis', plaintextBeyondLoopback });
    return result.ok ? 'ok' : result.code;
  };
  const http = (url: string, plaintextBeyondLoopback = false) => {
    const result = checkEgressUrl(url, { protocol: 'http', plaintextBeyondLoopback });
    return result.ok ? 'ok' : result.code;
  };

  it('takes redis: to loopback in any spelling, rediss: anywhere, and a password in either', () => {
    expect(redis('redis://127.0.0.1:6379')).toBe('ok');
    expect(redis('redis://127.1:6379')).toBe('ok');
    expect(redis('redis://LOCALHOST:6379')).toBe('ok');
    expect(redis('redis://[::1]:6379')).toBe('ok');
    expect(redis('redis://:pass@127.0.0.1:6379/0')).toBe('ok');
    expect(redis('rediss://user:pass@cache.example.com:6380')).toBe('ok');
  });

  it('refuses redis: beyond loopback unless the field opted into the private network', () => {
    expect(redis('redis://redis:6379')).toBe('URL_HTTP_NOT_LOOPBACK');
    expect(redis('redis://10.0.0.5:6379')).toBe('URL_HTTP_NOT_LOOPBACK');
    expect(redis('redis://redis:6379', true)).toBe('ok');
  });

  it('refuses other schemes and URLs without a host', () => {
    expect(redis('http://127.0.0.1:6379')).toBe('URL_SCHEME');
    expect(redis('unix:///var/run/redis.sock')).toBe('URL_SCHEME');
    expect(redis('redis://')).toBe('URL_INVALID');
    expect(http('redis://127.0.0.1:6379')).toBe('URL_SCHEME');
  });

  it('lets http: beyond loopback through only with the opt-in, and never credentials', () => {
    expect(http('http://gateway-b:8787')).toBe('URL_HTTP_NOT_LOOPBACK');
    expect(http('http://gateway-b:8787', true)).toBe('ok');
    expect(http('http://user:pw@gateway-b:8787', true)).toBe('URL_USERINFO');
  });

  it('names the scheme it wants and never the URL', () => {
    const result = checkEgressUrl('redis://s3cret-host:6379', { protocol: 'redis', plaintextBeyondLoopback: false });
    expect(result).toMatchObject({ ok: false, message: 'uses redis: to a non-loopback host; use rediss:' });
    const scheme = checkEgressUrl('ftp://s3cret-host/', { protocol: 'redis', plaintextBeyondLoopback: false });
    expect(scheme).toMatchObject({ ok: false, message: 'must use rediss: (or redis: to a loopback host)' });
  });
});
