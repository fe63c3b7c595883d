/**
 * The OAuth resource's transport rule (MCP 2025-11-25 Authorization, "Communication Security"):
 * a resource other machines reach is `https:`; plain `http:` only where nobody else can listen in.
 */
import { describe, expect, it } from 'vitest';
import { checkResourceTransport } from '../../../../src/inbound/auth/oauth/transport-security.js';

describe('the transport of an OAuth resource', () => {
  const cases: ReadonlyArray<readonly [string, string, string | undefined, boolean]> = [
    ['an https: public origin, bound anywhere', '0.0.0.0', 'https://mcp.example.com', true],
    ['an http: public origin on loopback', '127.0.0.1', 'http://127.0.0.1:8787', true],
    ['an http: public origin named localhost', '127.0.0.1', 'http://localhost:8787', true],
    ['an http: public origin on IPv6 loopback', '::1', 'http://[::1]:8787', true],
    ['an http: public origin other machines reach', '127.0.0.1', 'http://mcp.example.com', false],
    ['an http: public origin on a private address', '10.0.0.5', 'http://10.0.0.5:8787', false],
    ['no public origin, bound to loopback', '127.0.0.1', undefined, true],
    ['no public origin, bound to every interface', '0.0.0.0', undefined, false],
    ['no public origin, bound to a private address', '192.168.1.4', undefined, false],
  ];

  it.each(cases)('judges %s', (_name, address, publicUrl, ok) => {
    const result = checkResourceTransport({ address, publicUrl });
    expect(result.ok).toBe(ok);
    if (!result.ok) {
      expect(result.message).toContain('listen.publicUrl');
      expect(result.message).toContain('https:');
      if (publicUrl !== undefined) expect(result.message).not.toContain(publicUrl);
    }
  });
});
