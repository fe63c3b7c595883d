/**
 * The Redis event store's one connection for the whole gateway, built so that Redis being down
 * never blocks or breaks a live stream: the offline queue is off, so a command fails at once
 * while disconnected; each command's wait and the queue of commands waiting on the connection are
 * bounded, so a hung Redis cannot hold a write or a resume for long; it reconnects on its own and
 * dials only what the egress rule allows (`redis-egress.ts`); an outage is logged once when it
 * starts and once when it ends, nothing in between. What the store keeps in Redis is
 * `redis-event-store.ts`.
 */
import { createClient } from 'redis';
import type { Logger } from '../observability/logger.js';
import { closeRedis } from './redis-close.js';
import { redisEgress } from './redis-egress.js';

/** A command that has not answered by then fails (a hung Redis must not hold a resume forever). */
const COMMAND_TIMEOUT_MS = 2_000;
/** How long `start()` waits for the first connection. */
const START_WAIT_MS = 3_000;
/** Writes waiting on the connection at most; beyond it they fail (and are logged as an outage). */
const MAX_QUEUED_COMMANDS = 100_000;

export interface EventStoreRedisOptions {
  /** `redis://…` URL, already checked; it is never logged (it may carry a password). */
  url: string;
  /** `eventStore.allowPrivateNetwork`: may the connection reach loopback and private addresses? */
  allowPrivateNetwork: boolean;
  logger: Logger;
}

/** What the store reports of each command's outcome, for the outage log. */
export interface RedisHealth {
  failed(error: unknown): void;
  succeeded(): void;
}

/** Logs the first failure of an outage and the recovery, nothing in between. */
function outageLog(logger: Logger): RedisHealth {
  let healthy = true;
  return {
    failed(error: unknown): void {
      if (!healthy) return;
      healthy = false;
      // The error code only: node-redis messages name the address.
      const code = (error as { code?: unknown } | undefined)?.code;
      logger.warn({ err: typeof code === 'string' ? code : (error as Error | undefined)?.name }, 'redis event store unavailable; streams continue without resumability');
    },
    succeeded(): void {
      if (healthy) return;
      healthy = true;
      logger.info('redis event store reachable again; resumability restored');
    },
  };
}

/** Creates the client and starts connecting (in the background: it never rejects). */
export function connectEventStoreRedis(options: EventStoreRedisOptions) {
  const { url, allowPrivateNetwork, logger } = options;
  const health = outageLog(logger);
  const egress = redisEgress({ url, allowPrivateNetwork, connectTimeoutMs: COMMAND_TIMEOUT_MS, logger });
  const client = createClient({
    url,
    disableOfflineQueue: true,
    commandsQueueMaxLength: MAX_QUEUED_COMMANDS,
    commandOptions: { timeout: COMMAND_TIMEOUT_MS },
    maintNotifications: egress.maintNotifications,
    socket: { connectTimeout: COMMAND_TIMEOUT_MS, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1_000), lookup: egress.lookup },
  });
  client.on('error', (error: unknown) => health.failed(error));
  client.on('ready', () => health.succeeded());
  // Reconnects on its own; rejects only when closed before ever connecting.
  const connecting = client.connect().catch(() => undefined);

  return {
    client,
    health,
    /** Waits for the first connection, at most {@link START_WAIT_MS}; resolves either way. */
    async start(): Promise<void> {
      if (client.isReady) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          client.off('ready', done);
          resolve();
        };
        const timer = setTimeout(done, START_WAIT_MS);
        client.on('ready', done);
      });
    },
    close: () => closeRedis(client, connecting),
  };
}
