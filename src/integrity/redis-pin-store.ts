/**
 * The pin store when the gateway is clustered (the event store is Redis): one hash per server,
 * `<root>integrity:<server>` with fields `rev` and `doc` (the JSON `ServerPins`). `update` reads
 * the document, applies the transition and writes it back with a Lua compare-and-set on `rev`
 * (retried when another replica changed it meanwhile), so the first pin of a definition is set
 * once: two replicas listing a server for the first time at once never pin two first versions.
 * Each write is published on `<root>integrity` (the server's name); every replica subscribes on a
 * second connection and re-reads that server's document, and re-reads all of them after a
 * reconnect (a message sent while it was away is lost), so an approval on one replica holds on
 * every other within a round trip.
 */
import { createClusterRedis } from '../cluster/cluster-redis.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { PinStore } from './pin-store.js';
import { parseServerPins } from './pin-store.js';
import { EMPTY_PINS, type ServerPins } from './server-pins.js';

/** How long start may wait for a first connection before giving up with a clear error. */
const CONNECT_WITHIN_MS = 5_000;
/** Compare-and-set attempts per update before it is reported as failed. */
const MAX_ATTEMPTS = 16;

const COMPARE_AND_SET = `
local rev = redis.call('HGET', KEYS[1], 'rev') or '0'
if rev ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'rev', ARGV[2], 'doc', ARGV[3])
redis.call('PUBLISH', KEYS[2], ARGV[4])
return 1
`;

export interface RedisPinStoreOptions {
  url: string;
  allowPrivateNetwork: boolean;
  /** The key root shared with the event store and the cluster (default `portcullis:`). */
  keyRoot: string;
  logger: Logger;
}

async function connectWithin(client: { connect(): Promise<unknown>; destroy(): void }, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no connection within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([client.connect(), late]);
  } catch (error) {
    client.destroy();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

export function createRedisPinStore(options: RedisPinStoreOptions): PinStore {
  const keyOf = (server: string) => `${options.keyRoot}integrity:${server}`;
  const channel = `${options.keyRoot}integrity`;
  const client = createClusterRedis(options.url, options.allowPrivateNetwork, options.logger);
  const subscriber = client.duplicate();
  // The code only: a client error's text can name the host it dialled.
  const quiet = (error: unknown) => options.logger.debug({ code: (error as NodeJS.ErrnoException).code ?? 'error' }, 'tool pin store: redis connection problem');
  client.on('error', quiet);
  subscriber.on('error', quiet);
  const unavailable = (what: string, cause: unknown) =>
    new GatewayError('INTEGRITY_STORE_FAILED', `the tool pin store (redis) could not ${what}; check eventStore.url and that Redis is up`, { cause, retryAfterMs: 2_000 });
  const known = new Set<string>();
  const listeners: Array<(server: string, pins: ServerPins) => void> = [];

  const read = async (server: string): Promise<ServerPins> => {
    const [rev, doc] = await client.hmGet(keyOf(server), ['rev', 'doc']);
    if (rev == null || doc == null) return EMPTY_PINS;
    try {
      return parseServerPins(JSON.parse(doc));
    } catch (error) {
      throw new GatewayError('INTEGRITY_STORE_FAILED', `the tool pins of server "${server}" in redis cannot be read (${(error as Error).message}); fix or delete that key`, { server });
    }
  };

  const notify = (server: string) => {
    if (!known.has(server) || listeners.length === 0) return;
    void read(server).then(
      (pins) => {
        for (const listener of listeners) listener(server, pins);
      },
      (error: unknown) => options.logger.warn({ server, err: (error as Error).message }, 'tool pins: a change announced by another replica could not be read'),
    );
  };

  let subscribed = false;
  subscriber.on('ready', () => {
    // After a reconnect: anything published meanwhile was lost, so every server is read again.
    if (subscribed) for (const server of known) notify(server);
  });

  return {
    kind: 'redis',
    async load(servers) {
      try {
        if (!client.isOpen) await connectWithin(client, CONNECT_WITHIN_MS);
        if (!subscriber.isOpen) await connectWithin(subscriber, CONNECT_WITHIN_MS);
        if (!subscribed) {
          await subscriber.subscribe(channel, (message) => notify(message));
          subscribed = true;
        }
        for (const server of servers) known.add(server);
        const out = new Map<string, ServerPins>();
        for (const server of servers) out.set(server, await read(server));
        return out;
      } catch (error) {
        if (error instanceof GatewayError) throw error;
        throw unavailable('be read at start', error);
      }
    },
    async update(server, change) {
      known.add(server);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        let current: ServerPins;
        try {
          current = await read(server);
        } catch (error) {
          if (error instanceof GatewayError) throw error;
          throw unavailable('be read', error);
        }
        const { next, result } = change(current);
        if (next === undefined) return { pins: current, result };
        let stored: unknown;
        try {
          stored = await client.eval(COMPARE_AND_SET, { keys: [keyOf(server), channel], arguments: [String(current.rev), String(next.rev), JSON.stringify(next), server] });
        } catch (error) {
          throw unavailable('be written', error);
        }
        if (stored === 1) return { pins: next, result };
        // Another replica changed it first: apply the transition to what it stored.
      }
      throw unavailable(`be written (the pins of "${server}" kept changing under ${MAX_ATTEMPTS} attempts)`, undefined);
    },
    watch(listener) {
      listeners.push(listener);
    },
    async close() {
      for (const connection of [subscriber, client]) {
        if (connection.isOpen) await connection.close().catch(() => connection.destroy());
      }
    },
  };
}
