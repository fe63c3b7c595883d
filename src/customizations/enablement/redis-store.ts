/**
 * The state store when the event store is Redis: one hash, `<root>enablement`, beside the event
 * streams, so every replica sharing that Redis starts from the same decisions. Fields are JSON
 * arrays (`["global", key]`, `["workspace", uri, key]`), values `"1"` or `"0"`. The connection
 * is the cluster's kind (cluster/cluster-redis.ts): the event store's egress rule, commands that
 * time out rather than hang.
 * Decisions are read once, at start: a replica sees another replica's later toggles after its
 * own restart.
 */
import { createClusterRedis } from '../../cluster/cluster-redis.js';
import { GatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import { DecisionTable, MAX_STORED_WORKSPACES, type EnablementStore, type StoredScope } from './store.js';

/** How long start may wait for a first connection before giving up with a clear error. */
const CONNECT_WITHIN_MS = 5_000;

/** The first connection, or a rejection after `ms` (the client is then destroyed: no retry loop left behind). */
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

export interface RedisStoreOptions {
  url: string;
  allowPrivateNetwork: boolean;
  /** The key root shared with the event store and the cluster (default `portcullis:`). */
  keyRoot: string;
  logger: Logger;
}

function fieldOf(where: StoredScope, key: string): string {
  return JSON.stringify(where.scope === 'global' ? ['global', key] : ['workspace', where.workspace, key]);
}

/** Reads one hash field back; undefined for a field the gateway did not write. Pure. */
export function parseField(field: string, value: string): { where: StoredScope; key: string; value: boolean } | undefined {
  if (value !== '1' && value !== '0') return undefined;
  let parts: unknown;
  try {
    parts = JSON.parse(field);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || !parts.every((p) => typeof p === 'string')) return undefined;
  const decided = value === '1';
  if (parts[0] === 'global' && parts.length === 2) return { where: { scope: 'global' }, key: parts[1] as string, value: decided };
  if (parts[0] === 'workspace' && parts.length === 3) return { where: { scope: 'workspace', workspace: parts[1] as string }, key: parts[2] as string, value: decided };
  return undefined;
}

export function createRedisStore(options: RedisStoreOptions): EnablementStore {
  const hash = `${options.keyRoot}enablement`;
  // The cluster's kind of connection: bounded commands, no offline queue, the event store's egress rule.
  const client = createClusterRedis(options.url, options.allowPrivateNetwork, options.logger);
  // The code only: a client error's text can name the host it dialled.
  client.on('error', (error: unknown) => options.logger.debug({ code: (error as NodeJS.ErrnoException).code ?? 'error' }, 'enablement store: redis connection problem'));
  const table = new DecisionTable();
  const unavailable = (what: string, cause: unknown) =>
    new GatewayError('ENABLEMENT_STORE_FAILED', `the enablement store (redis) could not ${what}; check eventStore.url and that Redis is up`, { cause, retryAfterMs: 2_000 });

  return {
    kind: 'redis',
    async load() {
      try {
        if (!client.isOpen) await connectWithin(client, CONNECT_WITHIN_MS);
        const fields = await client.hGetAll(hash);
        for (const [field, value] of Object.entries(fields)) {
          const parsed = parseField(field, value);
          if (parsed === undefined) continue;
          if (parsed.where.scope === 'workspace' && !table.workspaces.has(parsed.where.workspace) && table.workspaces.size >= MAX_STORED_WORKSPACES) continue;
          table.apply(parsed.where, parsed.key, parsed.value);
        }
        return table;
      } catch (error) {
        throw unavailable('be read at start', error);
      }
    },
    async write(where, key, value) {
      const field = fieldOf(where, key);
      try {
        if (value === undefined) await client.hDel(hash, field);
        else await client.hSet(hash, field, value ? '1' : '0');
      } catch (error) {
        throw unavailable('store the decision', error);
      }
      table.apply(where, key, value);
    },
    async close() {
      if (client.isOpen) await client.close().catch(() => undefined);
    },
  };
}
