/** The audit contract's pure parts: the decision of each outcome and the fixed line shape. */
import { describe, expect, it } from 'vitest';
import { auditDecision, isRefusalCode } from '../../src/observability/audit-decision.js';
import { auditLine } from '../../src/observability/audit-log.js';

describe('auditDecision', () => {
  it.each([
    [undefined, undefined, 'allowed'],
    ['UPSTREAM_UNAVAILABLE', undefined, 'allowed'],
    ['UNKNOWN_TOOL', undefined, 'allowed'],
    ['UNKNOWN_TOOL', 'filtered', 'filtered'],
    ['UNKNOWN_PROMPT', 'disabled', 'disabled'],
    ['UNKNOWN_TOOL', 'denied', 'denied'],
    ['RATE_LIMITED', undefined, 'rate-limited'],
    ['IN_FLIGHT_LIMIT', undefined, 'rate-limited'],
    ['PRINCIPAL_SESSION_LIMIT', undefined, 'rate-limited'],
    ['SUBSCRIPTION_LIMIT', undefined, 'rate-limited'],
    ['UNAUTHENTICATED', undefined, 'denied'],
    ['ORIGIN_REFUSED', undefined, 'denied'],
  ] as const)('%s (hidden %s) → %s', (code, hidden, decision) => {
    expect(auditDecision(code, hidden)).toBe(decision);
  });

  it('counts perimeter and limit codes as refusals, nothing else', () => {
    expect(['UNAUTHENTICATED', 'HOST_NOT_ALLOWED', 'RATE_LIMITED', 'SESSION_LIMIT'].every(isRefusalCode)).toBe(true);
    expect(['UNKNOWN_TOOL', 'PARSE_ERROR', 'UPSTREAM_TIMEOUT', undefined].some(isRefusalCode)).toBe(false);
  });
});

describe('auditLine', () => {
  it('writes every field, in the documented order, with null for what does not apply, and cuts long strings', () => {
    const line = auditLine({ started: 0, endpoint: 'aggregate', decision: 'denied', durationMs: 1.23456, uri: 'x'.repeat(2_000), errorCode: -32600, reason: 'UNAUTHENTICATED', status: 401 });
    expect(line.endsWith('\n')).toBe(true);
    const parsed = JSON.parse(line) as Record<string, unknown>;
    expect(parsed).toEqual({
      type: 'audit', time: '1970-01-01T00:00:00.000Z', method: null, principal: null, session: null, endpoint: 'aggregate', server: null,
      tool: null, prompt: null, uri: 'x'.repeat(512), decision: 'denied', rule: null, durationMs: 1.235, outcome: 'error', errorCode: -32600,
      reason: 'UNAUTHENTICATED', status: 401, id: null,
    });
    expect(JSON.parse(auditLine({ started: 0, endpoint: 'aggregate', decision: 'denied', durationMs: 0, rule: 'r'.repeat(600) })).rule).toBe('r'.repeat(512));
  });
});
