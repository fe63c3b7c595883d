/**
 * A policy compiled into the predicates the config checks and the runtime ask: which variables a
 * stdio entry may set, which variables `envHeaders` may read, which hosts an HTTP upstream
 * may name, whether the deprecated SSE transport may be used. Globs and host patterns are compiled once, at boot (STYLE.md: compile at
 * boot, not per request); every predicate is pure.
 */
import type { Policy } from './policy-schema.js';
import { compileGlob, type Glob } from './tool-filter.js';

export interface PolicyRules {
  /** May a server entry set `allowPrivateNetwork: true`? */
  readonly privateNetworkAllowed: boolean;
  /** May a server entry use `transport: "sse"` (the deprecated 2024-11-05 HTTP+SSE transport)? */
  readonly sseUpstreamAllowed: boolean;
  /** True when a stdio server entry may not set this variable (case-insensitive globs). */
  stdioEnvDenied(name: string): boolean;
  /** True when `envHeaders` may read this variable: it matches an allow glob and no deny glob. */
  envHeaderAllowed(name: string): boolean;
  /**
   * True when a Streamable HTTP upstream may have this URL hostname (as `new URL().hostname`
   * gives it): always when the policy has no `upstreamHosts`, else only when an entry matches.
   */
  upstreamHostAllowed(hostname: string): boolean;
}

/** `new URL()`'s host serialisation: lower case, IPv4 in dotted decimal, IPv6 compressed. */
function canonicalHost(host: string): string | undefined {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
}

function withoutTrailingDot(host: string): string {
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/**
 * Compiles `upstreamHosts` entries: `docs.example.com` matches exactly that host, `*.example.com`
 * matches any name below `example.com` (not `example.com` itself). Entries are canonicalised
 * like URL hostnames, so `127.1` or `[FD00:0::1]` match the URLs that spell them otherwise.
 * Throws `TypeError` for an entry that is not a valid host.
 */
export function compileUpstreamHosts(entries: readonly string[] | undefined): (hostname: string) => boolean {
  if (entries === undefined) return () => true;
  const exact = new Set<string>();
  const suffixes: string[] = [];
  entries.forEach((entry, index) => {
    const wildcard = entry.startsWith('*.');
    const host = canonicalHost(wildcard ? entry.slice(2) : entry);
    if (host === undefined || host === '') throw new TypeError(`upstreamHosts[${index}] is not a valid host`);
    if (wildcard) suffixes.push(`.${host}`);
    else exact.add(host);
  });
  return function upstreamHostAllowed(hostname) {
    const host = withoutTrailingDot(hostname.toLowerCase());
    if (exact.has(host)) return true;
    return suffixes.some((suffix) => host.length > suffix.length && host.endsWith(suffix));
  };
}

function anyMatch(globs: readonly Glob[], name: string): boolean {
  return globs.some((glob) => glob.test(name));
}

/** Compiles a parsed policy into its predicates. */
export function compilePolicyRules(policy: Readonly<Policy>): PolicyRules {
  const stdioDenied = policy.stdioDeniedEnv.map(compileGlob);
  const headerAllow = policy.envHeaderNames.allow.map(compileGlob);
  const headerDeny = policy.envHeaderNames.deny.map(compileGlob);
  const upstreamHostAllowed = compileUpstreamHosts(policy.upstreamHosts);
  return {
    privateNetworkAllowed: policy.privateNetwork.allowServers,
    sseUpstreamAllowed: policy.legacySse.upstream,
    stdioEnvDenied: (name) => anyMatch(stdioDenied, name),
    envHeaderAllowed: (name) => anyMatch(headerAllow, name) && !anyMatch(headerDeny, name),
    upstreamHostAllowed,
  };
}
