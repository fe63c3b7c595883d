/**
 * The `statelessPool` block: the bounds that keep 2026-era traffic from starving (a bounded wait
 * for a connection, a per-principal share, a grace for cancelled calls, the input TTL) have safe
 * defaults, and a share larger than the pool is refused naming the field.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const servers = { files: { transport: 'stdio', command: 'node' } };

describe('statelessPool', () => {
  it('defaults to a bounded wait, a short cancellation grace and a five-minute input TTL', () => {
    expect(parseConfig({ servers }).statelessPool).toEqual({
      maxPerServer: 8,
      idleTimeoutMs: 60_000,
      maxWaitMs: 5_000,
      cancelGraceMs: 2_000,
      inputTtlMs: 300_000,
    });
  });

  it('accepts a per-principal share up to the pool size', () => {
    expect(parseConfig({ servers, statelessPool: { maxPerServer: 4, maxPerPrincipal: 4 } }).statelessPool.maxPerPrincipal).toBe(4);
  });

  it('refuses a per-principal share larger than the pool, naming the field', () => {
    const parse = () => parseConfig({ servers, statelessPool: { maxPerServer: 2, maxPerPrincipal: 3 } });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(/statelessPool\.maxPerPrincipal.*must not exceed maxPerServer/);
  });

  it.each([
    ['maxWaitMs', -1],
    ['cancelGraceMs', 120_000],
    ['inputTtlMs', 10],
    ['maxPerPrincipal', 0],
  ])('refuses statelessPool.%s = %s', (field, value) => {
    expect(() => parseConfig({ servers, statelessPool: { [field]: value } })).toThrow(`statelessPool.${field}`);
  });
});
