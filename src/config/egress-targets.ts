/**
 * Every URL a configuration makes the gateway dial, described for the one egress check
 * (`policy/egress-target.ts`). A new config field that names a URL — an exporter, a webhook — is
 * added here and nowhere else, and is then held to the same URL rule, host lists and
 * private-network policy as a server's `url`.
 */
import type { EgressTarget } from '../policy/egress-target.js';
import type { GatewayConfigFile, ServerConfig } from './schema.js';
import { gatewayClientOf } from './gateway-client.js';

/** The egress target of one server entry (Streamable HTTP or HTTP+SSE), or none (stdio servers dial nothing). */
export function serverEgressTarget(name: string, server: ServerConfig): EgressTarget | undefined {
  if (server.transport === 'stdio') return undefined;
  return {
    field: `servers.${name}.url`,
    url: server.url,
    protocol: 'http',
    tier: 'server',
    allowPrivateNetwork: server.allowPrivateNetwork,
    allowPrivateNetworkField: `servers.${name}.allowPrivateNetwork`,
  };
}

/** The connections the gateway makes on its own behalf: key set, session store, replicas. */
export function infrastructureEgressTargets(
  config: Pick<GatewayConfigFile, 'auth' | 'eventStore' | 'cluster' | 'tracing'> & Partial<Pick<GatewayConfigFile, 'servers'>>,
): EgressTarget[] {
  const targets: EgressTarget[] = [];
  if (config.tracing?.endpoint !== undefined) targets.push(tracesEgressTarget(config.tracing, config.tracing.endpoint, 'tracing.endpoint'));
  const jwks = config.auth?.kind === 'jwt' ? config.auth.jwks : undefined;
  if (jwks !== undefined && 'url' in jwks) {
    targets.push({
      field: 'auth.jwks.url',
      url: jwks.url,
      protocol: 'http',
      tier: 'infrastructure',
      allowPrivateNetwork: jwks.allowPrivateNetwork,
      allowPrivateNetworkField: 'auth.jwks.allowPrivateNetwork',
    });
  }
  if (config.auth?.kind === 'oauth') {
    config.auth.issuers.forEach((issuer, index) => {
      targets.push({
        field: `auth.issuers[${index}].issuer`,
        url: issuer.issuer,
        protocol: 'http',
        tier: 'infrastructure',
        allowPrivateNetwork: issuer.allowPrivateNetwork,
        allowPrivateNetworkField: `auth.issuers[${index}].allowPrivateNetwork`,
      });
    });
  }
  for (const [name, server] of Object.entries(config.servers ?? {})) {
    const client = gatewayClientOf(server);
    if (client === undefined) continue;
    targets.push({
      field: `servers.${name}.upstreamAuth.tokenUrl`,
      url: client.tokenUrl,
      protocol: 'http',
      tier: 'infrastructure',
      allowPrivateNetwork: client.allowPrivateNetwork,
      allowPrivateNetworkField: `servers.${name}.upstreamAuth.allowPrivateNetwork`,
    });
  }
  if (config.eventStore.url !== undefined) {
    targets.push({
      field: 'eventStore.url',
      url: config.eventStore.url,
      protocol: 'redis',
      tier: 'infrastructure',
      allowPrivateNetwork: config.eventStore.allowPrivateNetwork,
      allowPrivateNetworkField: 'eventStore.allowPrivateNetwork',
    });
  }
  if (config.cluster?.advertiseUrl !== undefined) targets.push(clusterPeerTarget(config.cluster, config.cluster.advertiseUrl));
  return targets;
}

/**
 * A replica's base URL as the others dial it: this replica's `cluster.advertiseUrl` at config
 * time, and every peer's advertised URL (read from Redis) at forward time, under this replica's
 * `cluster.allowPrivateNetwork`.
 */
export function clusterPeerTarget(cluster: { allowPrivateNetwork: boolean }, url: string): EgressTarget {
  return {
    field: 'cluster.advertiseUrl',
    url,
    protocol: 'http',
    tier: 'infrastructure',
    allowPrivateNetwork: cluster.allowPrivateNetwork,
    allowPrivateNetworkField: 'cluster.allowPrivateNetwork',
  };
}

/**
 * The OTLP traces exporter's URL: `tracing.endpoint`, or one read from the `OTEL_*` variables at
 * start (`field` then names the variable), under `tracing.allowPrivateNetwork` either way.
 */
export function tracesEgressTarget(tracing: { allowPrivateNetwork: boolean } | undefined, url: string, field: string): EgressTarget {
  return {
    field,
    url,
    protocol: 'http',
    tier: 'infrastructure',
    allowPrivateNetwork: tracing?.allowPrivateNetwork ?? false,
    allowPrivateNetworkField: 'tracing.allowPrivateNetwork',
  };
}
