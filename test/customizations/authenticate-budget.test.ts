/**
 * The authenticate route's own rate (authenticate-budget.ts), on an injected clock: 10 a minute
 * per principal × session × server and 60 a minute per principal, each refused with
 * `RATE_LIMITED` and when to retry, refilled as time passes; the keys never mix callers.
 */
import { describe, expect, it } from 'vitest';
import { AUTHENTICATE_PER_PRINCIPAL, AUTHENTICATE_PER_SESSION_SERVER, authenticateBudget } from '../../src/customizations/authenticate-budget.js';

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('authenticate\'s own rate', () => {
  it('refuses the eleventh attempt of a session for one server, and takes one again after six seconds', () => {
    const time = clock();
    const budget = authenticateBudget({ now: time.now });
    for (let i = 0; i < AUTHENTICATE_PER_SESSION_SERVER; i++) expect(budget.sessionServer('alice', 's1', 'notes')).toBeUndefined();
    const refused = budget.sessionServer('alice', 's1', 'notes');
    expect(refused).toMatchObject({ code: 'RATE_LIMITED' });
    expect(refused!.retryAfterMs).toBe(6_000);
    expect(refused!.message).not.toContain('s1');
    // Other keys are not spent: another server, another session, another principal presenting s1.
    expect(budget.sessionServer('alice', 's1', 'wiki')).toBeUndefined();
    expect(budget.sessionServer('alice', 's2', 'notes')).toBeUndefined();
    expect(budget.sessionServer('bob', 's1', 'notes')).toBeUndefined();
    time.advance(6_000);
    expect(budget.sessionServer('alice', 's1', 'notes')).toBeUndefined();
    expect(budget.sessionServer('alice', 's1', 'notes')).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('refuses a principal past sixty attempts, and the unauthenticated callers share one budget', () => {
    const budget = authenticateBudget({ now: clock().now });
    for (let i = 0; i < AUTHENTICATE_PER_PRINCIPAL; i++) {
      expect(budget.principal('alice')).toBeUndefined();
      expect(budget.principal(undefined)).toBeUndefined();
    }
    expect(budget.principal('alice')).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 1_000 });
    expect(budget.principal(undefined)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(budget.principal('bob')).toBeUndefined();
    // A principal literally named "" is not the unauthenticated callers.
    expect(budget.principal('')).toBeUndefined();
  });
});
