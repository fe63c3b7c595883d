/**
 * How this replica reaches its peers: through the egress guard, under `cluster.allowPrivateNetwork`,
 * with each peer URL held to the policy's rules before anything is sent (see `forward.ts`).
 *
 * Two dispatchers, by scheme: an `https:` peer may be anywhere the guard allows, an `http:` one
 * (plaintext: the client's request and the cluster secret in clear) only on the private network.
 * Replica-to-replica traffic carries SSE streams that may stay quiet for long (a long call, a
 * listen stream), so no body timeout; `forward.ts` bounds the wait for headers.
 */
import type { Dispatcher } from 'undici';
import { createEgressDispatcher } from '../net/egress-guard.js';
import type { ClusterOptions } from './cluster.js';
import type { ForwardOptions } from './forward.js';

/** Named in refusals and egress logs instead of a peer's URL. */
const PEER_FIELD = 'cluster.advertiseUrl';
const PEER_CONNECT_TIMEOUT_MS = 5_000;

export function peerForwarding(
  replicaId: string,
  options: Pick<ClusterOptions, 'secret' | 'peers' | 'logger'>,
): ForwardOptions & { close(): Promise<void> } {
  const { peers, logger } = options;
  const built = new Map<boolean, Dispatcher>();
  const dispatcher = (allowPublic: boolean): Dispatcher => {
    let found = built.get(allowPublic);
    if (found === undefined) {
      found = createEgressDispatcher(
        { server: PEER_FIELD, allowPrivateNetwork: peers.allowPrivateNetwork, allowPublic, connectTimeoutMs: PEER_CONNECT_TIMEOUT_MS, logger },
        { bodyTimeout: 0 },
      );
      built.set(allowPublic, found);
    }
    return found;
  };
  return {
    replicaId,
    secret: options.secret,
    peerAllowed: peers.allowed,
    dispatcherFor: (url) => dispatcher(url.protocol === 'https:'),
    onRefused: (message) => logger.warn({ field: PEER_FIELD, reason: message }, 'cluster: refused to forward to a peer the policy does not allow'),
    close: async () => {
      await Promise.all([...built.values()].map((d) => d.close().catch(() => undefined)));
    },
  };
}
