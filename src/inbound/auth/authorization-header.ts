/**
 * Reading the bearer token out of the request's Authorization header lines, as a pure check.
 *
 * Grammar (RFC 6750 §2.1): `credentials = "Bearer" 1*SP b64token`, the scheme case-insensitive
 * (RFC 9110 §11.1). Exactly one header line: two lines (or, where only Fetch headers are seen, one
 * line joined as `"a, b"`, which the b64token grammar refuses) are refused rather than picking
 * one, so that no two components can disagree about which credential was presented (the
 * duplicate-header confusion behind request-smuggling and auth-bypass bugs).
 *
 * Messages never contain the header value or any part of it.
 */
import { B64TOKEN, MAX_CLIENT_TOKEN_LENGTH } from '../../net/bearer-token.js';

export type BearerTokenResult =
  | { ok: true; token: string }
  | {
      ok: false;
      code: 'AUTH_MISSING' | 'AUTH_MALFORMED';
      message: string;
      /** True when the request tried the Bearer scheme (RFC 6750 §3.1 then names an error). */
      bearerAttempted: boolean;
    };

const BEARER_CREDENTIALS = /^Bearer +(\S+)$/i;
const BEARER_SCHEME = /^Bearer(?:\s|$)/i;

function malformed(message: string, bearerAttempted: boolean): BearerTokenResult {
  return { ok: false, code: 'AUTH_MALFORMED', message, bearerAttempted };
}

/** The token of the one `Authorization: Bearer <token>` line, or why there is none. */
export function readBearerToken(values: readonly string[]): BearerTokenResult {
  if (values.length === 0) {
    return { ok: false, code: 'AUTH_MISSING', message: 'authentication required', bearerAttempted: false };
  }
  if (values.length > 1) return malformed('repeated Authorization header refused', true);
  const value = (values[0] ?? '').trim();
  if (value === '') return malformed('empty Authorization header', false);
  if (!BEARER_SCHEME.test(value)) {
    return malformed('unsupported authorization scheme; use Bearer', false);
  }
  const match = BEARER_CREDENTIALS.exec(value);
  const token = match?.[1];
  if (token === undefined) return malformed('malformed Bearer credentials', true);
  if (token.length > MAX_CLIENT_TOKEN_LENGTH) return malformed('bearer token too long', true);
  if (!B64TOKEN.test(token)) return malformed('malformed Bearer credentials', true);
  return { ok: true, token };
}

/**
 * The status of credentials that could not be read: 400 when Bearer was attempted and is
 * malformed (RFC 6750 §3.1 `invalid_request`; MCP 2025-11-25 Authorization, "Error Handling":
 * 400 for a malformed authorization request), else 401 (no Bearer credentials were sent).
 */
export function unreadableStatus(bearerAttempted: boolean): 400 | 401 {
  return bearerAttempted ? 400 : 401;
}
