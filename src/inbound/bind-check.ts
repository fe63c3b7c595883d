/**
 * The bind rule (docs/decisions.md, "Binding beyond loopback"): a listener that is not on loopback
 * is reachable by other machines, so it may only run when inbound authentication is configured or
 * the policy says, in so many words, `acknowledgedNoAuth: true`. Otherwise anyone on the network
 * could use every configured server with the gateway's credentials (MCP 2025-11-25, Security Best
 * Practices, "Local MCP Server Compromise"; the same reason the SDK binds 127.0.0.1 by default).
 *
 * The check runs on the address actually bound (`server.address()` after `listen`), never on the
 * configured host name alone: `localhost` or a host name may resolve to anything, and `0.0.0.0`
 * or `::` bind every interface. Pure: nothing here binds, resolves or connects.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type BindCheckResult = { ok: true } | { ok: false; code: 'BIND_NOT_LOOPBACK'; message: string };

export interface BindCheckInput {
  /** The bound address as `server.address().address` gives it (an IP literal). */
  address: string;
  /** Whether inbound authentication is configured. */
  authConfigured: boolean;
  /** The policy's `acknowledgedNoAuth`. */
  acknowledgedNoAuth: boolean;
}

const OK: BindCheckResult = Object.freeze({ ok: true });

/**
 * True for 127.0.0.0/8, `::1` and IPv4-mapped loopback (`::ffff:127.0.0.1`). The unspecified
 * addresses `0.0.0.0` and `::` (every interface) are not loopback; neither is anything that does
 * not parse as an IP literal (fail closed).
 */
export function isLoopbackAddress(address: string): boolean {
  let literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const zone = literal.indexOf('%');
  if (zone !== -1) literal = literal.slice(0, zone);
  if (isIP(literal) === 0) return false;
  let parsed = ipaddr.parse(literal);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'loopback';
}

/** Refuses a non-loopback bound address unless authentication or `acknowledgedNoAuth` covers it. */
export function checkBind(input: BindCheckInput): BindCheckResult {
  if (isLoopbackAddress(input.address)) return OK;
  if (input.authConfigured || input.acknowledgedNoAuth) return OK;
  return {
    ok: false,
    code: 'BIND_NOT_LOOPBACK',
    message:
      `refusing to serve on ${input.address}: it is not a loopback address and no inbound authentication is configured. ` +
      'Configure authentication (the "auth" block of the gateway config), or set "acknowledgedNoAuth": true in the policy ' +
      'to accept that anyone who can reach this address can use every configured server.',
  };
}
