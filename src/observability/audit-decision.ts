/**
 * The audit log's `decision` for one outcome (docs/operations.md, "Audit log"): what the gateway
 * decided about the request, apart from how the request then went (`outcome`). Pure.
 */
export type AuditDecision = 'allowed' | 'filtered' | 'denied' | 'disabled' | 'rate-limited';

/** Gateway error codes that are a limit or a rate refusing the request. */
const LIMITED = new Set([
  'RATE_LIMITED',
  'IN_FLIGHT_LIMIT',
  'PRINCIPAL_SESSION_LIMIT',
  'SESSION_LIMIT',
  'TASK_LIMIT',
  'SESSION_CHILD_LIMIT',
  'PRINCIPAL_CONNECTION_LIMIT',
  'WATCH_LIMIT',
  'SUBSCRIPTION_LIMIT',
]);

/** Gateway error codes that are the perimeter refusing the caller. */
const DENIED = new Set(['UNAUTHENTICATED', 'HOST_INVALID', 'HOST_NOT_ALLOWED', 'ORIGIN_REFUSED', 'FORWARD_REFUSED']);

/** True for a gateway error code that is a refusal (audited whatever the method). */
export function isRefusalCode(code: string | undefined): boolean {
  return code !== undefined && (LIMITED.has(code) || DENIED.has(code));
}

/**
 * The decision for a request that ended with gateway error `code` (absent: success or an
 * upstream's own error), `hidden` saying why a name it called is not listed, if it is hidden.
 */
export function auditDecision(code: string | undefined, hidden?: 'filtered' | 'denied' | 'disabled'): AuditDecision {
  if (code === undefined) return 'allowed';
  if (LIMITED.has(code)) return 'rate-limited';
  if (DENIED.has(code)) return 'denied';
  if ((code === 'UNKNOWN_TOOL' || code === 'UNKNOWN_PROMPT') && hidden !== undefined) return hidden;
  return 'allowed';
}
