/**
 * How this gateway shares its sessions (session/session-hooks.ts), from the parsed config: this
 * replica's `Cluster` when `cluster` is present, else `LOCAL_SESSIONS` (held here alone).
 * The schema already refused a cluster without the redis store, so here the
 * redis URL is present; the secret comes from the environment the gateway was given. Every peer
 * URL (read from Redis at forward time) is judged by the policy's rules for `cluster.advertiseUrl`.
 */
import { clusterPeerTarget } from '../config/egress-targets.js';
import { ConfigError } from '../errors.js';
import type { GatewayConfig } from '../config/schema.js';
import { compileEgressCheck } from '../policy/egress-target.js';
import { compilePolicyRules } from '../policy/policy-rules.js';
import type { Logger } from '../observability/logger.js';
import type { ClusterKeys } from './cluster-keys.js';
import { LOCAL_SESSIONS, type SessionSharing } from '../session/session-hooks.js';

export const CLUSTER_SECRET_ENV = 'PORTCULLIS_CLUSTER_SECRET';

/** The cluster code (and its `redis` client) is loaded only when a cluster is configured. */
export async function sessionSharingFromConfig(
  config: Readonly<GatewayConfig>,
  keys: ClusterKeys,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): Promise<SessionSharing> {
  const cluster = config.cluster;
  if (cluster === undefined) return LOCAL_SESSIONS;
  const redisUrl = config.eventStore.url;
  if (config.eventStore.kind !== 'redis' || redisUrl === undefined) {
    throw new TypeError('cluster needs eventStore.kind "redis" with a url');
  }
  const secret = env[CLUSTER_SECRET_ENV];
  if (config.auth !== undefined && (secret === undefined || secret === '')) {
    // A forwarded request reaches its owner without the client's credential; only a proof MACed
    // with the shared secret may say who the client is (principal-proof.ts).
    throw new ConfigError([`cluster: with auth, ${CLUSTER_SECRET_ENV} must be set (the same on every replica): forwarded requests carry the principal under it`]);
  }
  const { Cluster } = await import('./cluster.js');
  return new Cluster({
    replicaId: cluster.replicaId,
    advertiseUrl: cluster.advertiseUrl,
    leaseMs: cluster.leaseMs,
    redisUrl,
    redisAllowPrivateNetwork: config.eventStore.allowPrivateNetwork,
    peers: { allowPrivateNetwork: cluster.allowPrivateNetwork, allowed: compileEgressCheck(compilePolicyRules(config.policy), (url) => clusterPeerTarget(cluster, url)) },
    keys,
    idleTimeoutMs: config.sessions.idleTimeoutMs,
    secret: secret === undefined || secret === '' ? undefined : secret,
    logger: logger.child({ replica: cluster.replicaId }),
  });
}
