/**
 * The cluster's own Redis connection (one per replica, beside the event store's): commands
 * time out instead of hanging a request, nothing queues while disconnected (a request for a
 * foreign session then gets a 503 to retry), and it reconnects on its own.
 */
import { createClient } from 'redis';

const TIMEOUT_MS = 2_000;

export function createClusterRedis(url: string) {
  return createClient({
    url,
    disableOfflineQueue: true,
    commandOptions: { timeout: TIMEOUT_MS },
    socket: { connectTimeout: TIMEOUT_MS, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1_000) },
  });
}

export type ClusterRedis = ReturnType<typeof createClusterRedis>;
