/**
 * The egress rule for the gateway's Redis connections (the event store's and the cluster's): the
 * host of `eventStore.url` is judged on the address actually dialled, like any upstream — loopback
 * and private addresses only with `eventStore.allowPrivateNetwork`, and plain `redis:` never to a
 * public address (the password and every session's history would cross the internet in clear).
 *
 * Also: node-redis follows a server's `MOVING` maintenance notification to whatever host and port
 * it names, a connection the policy would never see; that is switched off for every client here.
 */
import type { LookupFunction } from 'node:net';
import { guardTcpHost } from '../net/guarded-lookup.js';
import type { Logger } from '../observability/logger.js';

export interface RedisEgressOptions {
  url: string;
  /** `eventStore.allowPrivateNetwork`. */
  allowPrivateNetwork: boolean;
  connectTimeoutMs: number;
  logger: Logger;
}

/** The client options that keep a Redis client inside the policy. Throws for a refused literal host. */
export function redisEgress(options: RedisEgressOptions): { maintNotifications: 'disabled'; lookup: LookupFunction } {
  const url = new URL(options.url);
  const { lookup } = guardTcpHost(url.hostname, {
    server: 'eventStore.url',
    allowPrivateNetwork: options.allowPrivateNetwork === true,
    allowPublic: url.protocol === 'rediss:',
    connectTimeoutMs: options.connectTimeoutMs,
    logger: options.logger,
  });
  return { maintNotifications: 'disabled', lookup };
}
