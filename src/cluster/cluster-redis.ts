/**
 * The cluster's own Redis connection (one per replica, beside the event store's): commands
 * time out instead of hanging a request, nothing queues while disconnected (a request for a
 * foreign session then gets a 503 to retry), it reconnects on its own, and it dials only what the
 * egress rule allows (`session/redis-egress.ts`).
 */
import { createClient } from 'redis';
import type { Logger } from '../observability/logger.js';
import { redisEgress } from '../session/redis-egress.js';

const TIMEOUT_MS = 2_000;

/** `allowPrivateNetwork` is `eventStore.allowPrivateNetwork`: the same Redis, the same rule. */
export function createClusterRedis(url: string, allowPrivateNetwork: boolean, logger: Logger) {
  const egress = redisEgress({ url, allowPrivateNetwork, connectTimeoutMs: TIMEOUT_MS, logger });
  return createClient({
    url,
    disableOfflineQueue: true,
    commandOptions: { timeout: TIMEOUT_MS },
    maintNotifications: egress.maintNotifications,
    socket: { connectTimeout: TIMEOUT_MS, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1_000), lookup: egress.lookup },
  });
}

export type ClusterRedis = ReturnType<typeof createClusterRedis>;
