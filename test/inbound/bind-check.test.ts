import { describe, expect, it } from 'vitest';
import { checkBind, isLoopbackAddress } from '../../src/inbound/bind-check.js';

describe('isLoopbackAddress', () => {
  const cases: Array<[string, boolean]> = [
    ['127.0.0.1', true],
    ['127.0.0.2', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['[::]', false],
    ['::ffff:0.0.0.0', false],
    ['10.0.0.5', false],
    ['192.168.1.10', false],
    ['169.254.169.254', false],
    ['fe80::1%eth0', false],
    ['2001:db8::1', false],
    ['128.0.0.1', false],
    ['localhost', false],
    ['', false],
    ['not an address', false],
  ];
  it.each(cases)('%s → %s', (address, expected) => expect(isLoopbackAddress(address)).toBe(expected));
});

describe('checkBind', () => {
  /** [address, authConfigured, acknowledgedNoAuth, ok] */
  const cases: Array<[string, boolean, boolean, boolean]> = [
    ['127.0.0.1', false, false, true],
    ['::1', false, false, true],
    ['0.0.0.0', false, false, false],
    ['::', false, false, false],
    ['192.168.1.10', false, false, false],
    ['0.0.0.0', true, false, true],
    ['0.0.0.0', false, true, true],
    ['::', true, true, true],
  ];
  it.each(cases)('%s with auth=%s, acknowledgedNoAuth=%s → ok %s', (address, authConfigured, acknowledgedNoAuth, ok) => {
    expect(checkBind({ address, authConfigured, acknowledgedNoAuth }).ok).toBe(ok);
  });

  it('says exactly which of the two settings would allow the bind', () => {
    const result = checkBind({ address: '0.0.0.0', authConfigured: false, acknowledgedNoAuth: false });
    if (result.ok) throw new Error('expected a refusal');
    expect(result.code).toBe('BIND_NOT_LOOPBACK');
    expect(result.message).toContain('0.0.0.0');
    expect(result.message).toContain('Configure authentication (the "auth" block of the gateway config)');
    expect(result.message).toContain('"acknowledgedNoAuth": true in the policy');
  });
});
