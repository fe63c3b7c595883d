/**
 * The Origin allowlist: the edge guard that stops web pages from driving the gateway.
 *
 * Why: browsers attach `Origin` to cross-origin and non-GET requests, and a page the user merely
 * visits can POST to a server on loopback. MCP 2025-11-25 (Transports, "Security Warning") says
 * servers MUST validate Origin and reject invalid ones with 403. Desktop and CLI clients send no
 * Origin, so an absent header passes; a present one must be on the allowlist — by default nothing
 * is, so no web page can talk to the gateway unless the policy names it.
 *
 * Comparison is exact on the canonical serialisation (`new URL(o).origin === o`), so there is no
 * lenient parsing for an attacker to play with: `HTTP://LOCALHOST`, `http://localhost:80/` or a
 * trailing slash are refused, never "normalised into" an allowed entry. Messages never echo the
 * received value.
 */

export type OriginCheckCode = 'ORIGIN_DUPLICATED' | 'ORIGIN_MALFORMED' | 'ORIGIN_NOT_ALLOWED';

export type OriginCheckResult = { ok: true } | { ok: false; code: OriginCheckCode; message: string };

/** Judges every Origin header line of one request, as received (raw, not joined). */
export type OriginCheck = (rawOriginValues: readonly string[]) => OriginCheckResult;

/** The opaque origin browsers send from sandboxed frames, `file:` pages and some redirects. */
const OPAQUE_ORIGIN = 'null';

const OK: OriginCheckResult = Object.freeze({ ok: true });

function failure(code: OriginCheckCode, message: string): OriginCheckResult {
  return { ok: false, code, message };
}

/** True iff `value` is a tuple origin exactly as a browser serialises it (scheme://host[:port]). */
export function isCanonicalOrigin(value: string): boolean {
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}

/**
 * Compile an Origin check. Entries must be canonical origins (or the literal `null`, which then
 * admits opaque origins — rarely wise); anything else throws TypeError at boot, since a
 * non-canonical entry could never match and would silently lock out the client it was meant for.
 */
export function compileOriginCheck(allowedOrigins: readonly string[] = []): OriginCheck {
  allowedOrigins.forEach((entry, index) => {
    if (entry !== OPAQUE_ORIGIN && !isCanonicalOrigin(entry)) {
      throw new TypeError(
        `allowedOrigins[${index}] is not a canonical origin (lower-case scheme://host[:port], no path, no default port)`,
      );
    }
  });
  const allowed = new Set(allowedOrigins);

  return function checkOrigin(rawOriginValues) {
    if (rawOriginValues.length === 0) return OK;
    if (rawOriginValues.length > 1) return failure('ORIGIN_DUPLICATED', 'Origin header duplicated');
    const value = rawOriginValues[0] ?? '';
    // @hono/node-server (and the Fetch Headers class) join repeated lines as "a, b".
    if (value.includes(',')) return failure('ORIGIN_DUPLICATED', 'Origin header duplicated');
    if (value !== OPAQUE_ORIGIN && !isCanonicalOrigin(value)) {
      return failure('ORIGIN_MALFORMED', 'Origin header malformed');
    }
    if (!allowed.has(value)) return failure('ORIGIN_NOT_ALLOWED', 'Origin header not allowed');
    return OK;
  };
}

/**
 * The origins of pages served by the gateway's own loopback listener on `port`
 * (`http://127.0.0.1:PORT`, `http://localhost:PORT`, `http://[::1]:PORT`, canonical, so port 80
 * is omitted), for a policy that wants to admit them. Throws TypeError for a port outside 1–65535.
 */
export function loopbackOrigins(port: number): string[] {
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new TypeError('port must be an integer from 1 to 65535');
  }
  return ['127.0.0.1', 'localhost', '[::1]'].map((host) => new URL(`http://${host}:${port}`).origin);
}
