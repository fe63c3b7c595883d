/**
 * Hono adapters for the Host and Origin checks (src/policy): the first middleware of every route,
 * for every method, before any body is read. They only turn a check's result into a response.
 *
 * They judge the header lines as received. Under @hono/node-server the Node request is
 * `c.env.incoming` (`HttpBindings`) and its `rawHeaders` show every line, so a repeated Host is
 * seen as two lines even though Node's parsed `headers.host` keeps only the first; elsewhere (e.g.
 * `app.request()` in tests) the Fetch headers are the best there is, where repeats arrive joined
 * as "a, b", which the checks also refuse.
 *
 * Rejections are JSON-RPC errors without an id (the body was never read): 400 for a missing,
 * repeated or malformed Host, 403 for a Host or Origin not allowed (MCP 2025-11-25 Transports,
 * "Security Warning"; conformance `dns-rebinding-protection` wants a 4xx), 403 for any bad Origin.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { refusal } from '../errors.js';
import { DEFAULT_ALLOWED_HOSTS, checkRequestTarget, compileHostCheck } from '../policy/host-check.js';
import { compileOriginCheck } from '../policy/origin-check.js';
import { headerLines, nodeRequest } from './header-lines.js';
import type { Logger } from '../observability/logger.js';

export interface HostGuardOptions {
  /** Hostnames a request may name in Host (default `127.0.0.1`, `localhost`, `[::1]`). */
  allowedHosts?: readonly string[];
  /** Where a refused host is logged: the first refusal of each host, for at most `LOGGED_REFUSED_HOSTS` hosts. */
  logger?: Logger;
}

/**
 * Distinct refused hosts logged per process. A client choosing Host values (a rebinding page, a
 * scanner) cannot grow the log or this set beyond it; past it, one line says further ones go unlogged.
 */
export const LOGGED_REFUSED_HOSTS = 32;

export interface OriginGuardOptions {
  /** Canonical origins admitted (default none: only requests without Origin pass). */
  allowedOrigins?: readonly string[];
}

/** HTTP/2 carries the Host in the `:authority` pseudo-header; either kind counts as a Host line. */
const HOST_HEADER_NAMES: ReadonlySet<string> = new Set(['host', ':authority']);
const ORIGIN_HEADER_NAMES: ReadonlySet<string> = new Set(['origin']);


/**
 * Refuse requests whose Host is missing, repeated, malformed or not on the allowlist (DNS
 * rebinding defence), and, under Node, requests whose target is absolute-form (a second host
 * the Host check never saw). Throws TypeError at construction for a bad allowlist.
 */
export function hostGuard(options: HostGuardOptions = {}): MiddlewareHandler {
  const check = compileHostCheck(options.allowedHosts ?? DEFAULT_ALLOWED_HOSTS);
  const logged = new Set<string>();
  const logRefusal = (host: string) => {
    if (options.logger === undefined || logged.has(host) || logged.size > LOGGED_REFUSED_HOSTS) return;
    logged.add(host);
    if (logged.size > LOGGED_REFUSED_HOSTS) {
      options.logger.warn({ hosts: LOGGED_REFUSED_HOSTS }, 'more requests for hosts not in allowedHosts; further hosts are not logged');
      return;
    }
    options.logger.warn({ host }, "refused a request for a host not in the policy's allowedHosts (add it there if clients reach the gateway by this name)");
  };
  return async function hostGuard(c, next) {
    const target = nodeRequest(c)?.url;
    if (target !== undefined) {
      const targetResult = checkRequestTarget(target);
      if (!targetResult.ok) return refusal('HOST_INVALID', targetResult.message);
    }
    const result = check(headerLines(c, HOST_HEADER_NAMES));
    if (!result.ok) {
      if (result.host !== undefined) logRefusal(result.host);
      return refusal(result.code === 'HOST_NOT_ALLOWED' ? 'HOST_NOT_ALLOWED' : 'HOST_INVALID', result.message);
    }
    await next();
  };
}

/**
 * Refuse requests that carry an Origin not on the allowlist, a repeated Origin or a malformed one
 * (403). Requests without Origin pass. Throws TypeError at construction for a bad allowlist.
 */
export function originGuard(options: OriginGuardOptions = {}): MiddlewareHandler {
  const check = compileOriginCheck(options.allowedOrigins ?? []);
  return async function originGuard(c, next) {
    const result = check(headerLines(c, ORIGIN_HEADER_NAMES));
    if (!result.ok) return refusal('ORIGIN_REFUSED', result.message);
    await next();
  };
}
