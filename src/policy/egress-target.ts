/**
 * One check for every URL a configuration can make the gateway dial: an MCP upstream's `url`, and
 * every connection the gateway makes on its own behalf — the JWKS it fetches keys from, the Redis
 * it keeps sessions in, the replicas it forwards to, and whatever exporter comes next. A new field
 * that names a URL describes itself as an {@link EgressTarget} (see `config/egress-targets.ts`) and
 * gets the same rules, so no URL reaches the network without the policy having seen it.
 *
 * The rules, in order: the URL rule of its scheme family (`upstream-url.ts`); the field's
 * private-network opt-in only where the policy permits it for that tier
 * (`privateNetwork.allowServers`, `privateNetwork.allowInfrastructure`); its host in the tier's
 * host list when the policy has one (`upstreamHosts`, `infrastructureHosts`). Whether the host
 * *is* private is decided when the connection is made, on the address actually dialled (src/net):
 * names resolve at run time, so only that check is worth the name.
 *
 * Problems name the field, never the URL or any part of it.
 */
import type { EgressTier, PolicyRules } from './policy-rules.js';
import { canonicalHostname, checkEgressUrl, type UrlProtocol } from './upstream-url.js';

export interface EgressTarget {
  /** The config path of the URL (`servers.docs.url`, `eventStore.url`), named in every problem. */
  field: string;
  url: string;
  protocol: UrlProtocol;
  tier: EgressTier;
  /** The field's opt-in into loopback and private addresses… */
  allowPrivateNetwork: boolean;
  /** …and the config path of that opt-in. */
  allowPrivateNetworkField: string;
}

const TIER_WORDS: Readonly<Record<EgressTier, { what: string; hosts: string }>> = Object.freeze({
  server: { what: 'private-network upstreams', hosts: 'upstreamHosts' },
  infrastructure: { what: "private-network connections for the gateway's own services", hosts: 'infrastructureHosts' },
});

function hostnameOf(url: string): string | undefined {
  try {
    return canonicalHostname(new URL(url));
  } catch {
    return undefined;
  }
}

/** Every problem of one target under the policy; empty when the policy lets it be dialled. */
export function egressTargetProblems(target: EgressTarget, rules: PolicyRules): string[] {
  const problems: string[] = [];
  const words = TIER_WORDS[target.tier];
  const url = checkEgressUrl(target.url, {
    protocol: target.protocol,
    plaintextBeyondLoopback: target.tier === 'infrastructure' && target.allowPrivateNetwork,
  });
  if (!url.ok) {
    const hint =
      url.code === 'URL_HTTP_NOT_LOOPBACK' && target.tier === 'infrastructure'
        ? ` (or set ${target.allowPrivateNetworkField} for a host on your private network)`
        : '';
    problems.push(`${target.field}: ${url.message}${hint}`);
  }
  const privateAllowed = target.tier === 'server' ? rules.privateNetworkAllowed : rules.infrastructurePrivateNetworkAllowed;
  if (target.allowPrivateNetwork && !privateAllowed) {
    problems.push(`${target.allowPrivateNetworkField}: the policy does not allow ${words.what}`);
  }
  const hostname = hostnameOf(target.url);
  const hostAllowed = target.tier === 'server' ? rules.upstreamHostAllowed : rules.infrastructureHostAllowed;
  // An unparsable URL was reported above.
  if (hostname !== undefined && !hostAllowed(hostname)) problems.push(`${target.field}: host is not in the policy's ${words.hosts}`);
  return problems;
}

/**
 * The same rules, compiled for URLs that arrive while the gateway runs (a peer replica's address,
 * read from Redis): a refusal names `field` and never the URL.
 */
export function compileEgressCheck(
  rules: PolicyRules,
  targetOf: (url: string) => EgressTarget,
): (url: string) => { ok: true } | { ok: false; message: string } {
  return function egressAllowed(url) {
    const problems = egressTargetProblems(targetOf(url), rules);
    return problems.length === 0 ? { ok: true } : { ok: false, message: problems.join('; ') };
  };
}
