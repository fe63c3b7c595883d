/**
 * The Host allowlist: the first edge guard, and the defence against DNS rebinding.
 *
 * Why: a web page on `evil.example` can have its DNS name re-pointed at 127.0.0.1, after which the
 * victim's browser sends that page's requests to a gateway on loopback — with `Host: evil.example`.
 * Refusing every Host that is not on the allowlist closes that door (MCP 2025-11-25, Security Best
 * Practices "Local MCP Server Compromise" and Transports "Security Warning"; SDK advisory
 * GHSA-w48q-cv73-mx4w; conformance scenario `dns-rebinding-protection`).
 *
 * The check is strict on form because the header is attacker-controlled and other code (URL
 * building, logs) may read it later: exactly one Host line, no userinfo, path, whitespace or
 * percent-encoding, a valid port if any. Messages never echo a value that failed the form check;
 * a well-formed host that is not allowed is named (lower-cased, without its port — by then it is
 * a DNS name or an IP literal of letters, digits, dots, hyphens and colons only, at most 253
 * characters) so the operator sees which name clients use and can add it to `allowedHosts`.
 */
import { isIPv6 } from 'node:net';

/** Loopback, as every local client spells it (the embedded policy's default, policies/README.md). */
export const DEFAULT_ALLOWED_HOSTS: readonly string[] = Object.freeze(['127.0.0.1', 'localhost', '[::1]']);

export type HostCheckCode = 'HOST_MISSING' | 'HOST_DUPLICATED' | 'HOST_MALFORMED' | 'HOST_NOT_ALLOWED';

export type HostCheckResult = { ok: true } | { ok: false; code: HostCheckCode; message: string; host?: string };

/** The longest DNS name (RFC 1035): a longer Host is refused without being named. */
const MAX_NAMED_HOST = 253;

/** Judges every Host header line of one request, as received (raw, not joined). */
export type HostCheck = (rawHostHeaderValues: readonly string[]) => HostCheckResult;

const OK: HostCheckResult = Object.freeze({ ok: true });

const BRACKETED = /^\[([0-9a-f:.]+)\](?::([0-9]*))?$/i;
const NAMED = /^([a-z0-9._-]+)(?::([0-9]*))?$/i;
const LABEL = /^[a-z0-9_-]+$/;
const PORT = /^[1-9][0-9]{0,4}$/;

function failure(code: HostCheckCode, message: string): HostCheckResult {
  return { ok: false, code, message };
}

/**
 * Parse `host[:port]` into the form compared with the allowlist: lower-cased, port dropped, one
 * trailing dot dropped, IPv6 kept in brackets. Returns undefined for anything malformed.
 */
function comparableHost(value: string): { host: string; hasPort: boolean } | undefined {
  const bracketed = BRACKETED.exec(value);
  const match = bracketed ?? NAMED.exec(value);
  if (match === null) return undefined;
  const [, host = '', port] = match;
  if (port !== undefined && !(PORT.test(port) && Number(port) <= 65_535)) return undefined;
  const hasPort = port !== undefined;
  if (bracketed !== null) {
    return isIPv6(host) ? { host: `[${host.toLowerCase()}]`, hasPort } : undefined;
  }
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (!name.split('.').every((label) => LABEL.test(label.toLowerCase()))) return undefined;
  return { host: name.toLowerCase(), hasPort };
}

/**
 * Compile a Host check from the allowlist (exact hostnames; case, port and one trailing dot are
 * ignored on both sides). A bare IPv6 entry (`::1`) is accepted and compared as `[::1]`.
 * Throws TypeError at boot for an empty list or an entry with a port, scheme, path or bad syntax.
 */
export function compileHostCheck(allowedHosts: readonly string[] = DEFAULT_ALLOWED_HOSTS): HostCheck {
  if (allowedHosts.length === 0) throw new TypeError('allowedHosts must list at least one host');
  const allowed = new Set<string>();
  allowedHosts.forEach((entry, index) => {
    const parsed = comparableHost(isIPv6(entry) ? `[${entry}]` : entry);
    if (parsed === undefined || parsed.hasPort) {
      throw new TypeError(`allowedHosts[${index}] is not a bare hostname or IP literal (no port, scheme or path)`);
    }
    allowed.add(parsed.host);
  });

  return function checkHost(rawHostHeaderValues) {
    if (rawHostHeaderValues.length === 0) return failure('HOST_MISSING', 'Host header missing');
    if (rawHostHeaderValues.length > 1) return failure('HOST_DUPLICATED', 'Host header duplicated');
    const value = rawHostHeaderValues[0] ?? '';
    if (value.trim() === '') return failure('HOST_MISSING', 'Host header empty');
    // @hono/node-server (and the Fetch Headers class) join repeated lines as "a, b".
    if (value.includes(',')) return failure('HOST_DUPLICATED', 'Host header duplicated');
    const parsed = comparableHost(value);
    if (parsed === undefined) return failure('HOST_MALFORMED', 'Host header malformed');
    if (!allowed.has(parsed.host)) {
      if (parsed.host.length > MAX_NAMED_HOST) return failure('HOST_NOT_ALLOWED', 'Host header not allowed (a name longer than any DNS name)');
      return {
        ok: false,
        code: 'HOST_NOT_ALLOWED',
        message: `Host header not allowed: "${parsed.host}" is not in the policy's allowedHosts (add it there if clients reach the gateway by this name)`,
        host: parsed.host,
      };
    }
    return OK;
  };
}

export type RequestTargetResult = { ok: true } | { ok: false; code: 'TARGET_NOT_ORIGIN_FORM'; message: string };

/**
 * The request line's target must be origin-form (`/mcp?x`), or `*` (OPTIONS). An absolute-form
 * target (`POST http://other.example/mcp`) names a host that the Host check never saw, and
 * @hono/node-server builds `c.req.url` from it (docs/decisions.md, "Behaviours the code is built
 * around"). We are not a forward
 * proxy, so refuse it (RFC 9112 §3.2.2 lets only proxies rely on absolute-form).
 */
export function checkRequestTarget(target: string): RequestTargetResult {
  if (target.startsWith('/') || target === '*') return { ok: true };
  return { ok: false, code: 'TARGET_NOT_ORIGIN_FORM', message: 'request target must be a path' };
}
