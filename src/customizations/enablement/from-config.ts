/**
 * The enablement of a starting gateway: one item per configured server (`config#mcp=<name>`,
 * the config's `enabled`), per plugin (`plugin:<name>`, its `plugins` entry's `enabled`) and per
 * plugin server (`plugin:<name>#mcp=<server>`, inside its plugin), and the decisions its state
 * store holds — a JSON file in the state directory, or Redis when the event store is Redis.
 */
import type { GatewayConfig, ServerConfig } from '../../config/schema.js';
import { DEFAULT_KEY_ROOT } from '../../cluster/cluster-keys.js';
import type { Logger } from '../../observability/logger.js';
import type { LoadedPlugins } from '../../plugins/plugin-servers.js';
import { configServerKey } from '../build-list.js';
import { Enablement, type EnablementItem } from './enablement.js';
import { createFileStore } from './file-store.js';
import type { EnablementStore } from './store.js';

type EnablementConfig = Pick<GatewayConfig, 'servers' | 'stateDir' | 'eventStore'>;

/** The item of configured server `name`: its durable key, its config `enabled` the default. Pure. */
export function enablementItem(name: string, server: Pick<ServerConfig, 'enabled'>): EnablementItem {
  return { key: configServerKey(name), server: name, configEnabled: server.enabled ?? true };
}

/** Every item enablement decides about, in list order. Pure. */
export function enablementItems(config: Pick<GatewayConfig, 'servers'>, plugins: LoadedPlugins): EnablementItem[] {
  const items: EnablementItem[] = Object.entries(config.servers).map(([name, server]) => enablementItem(name, server));
  for (const plugin of plugins.plugins) {
    const container = plugin.declaration.key;
    items.push({ key: container, configEnabled: plugin.enabled });
    for (const server of plugin.servers) {
      items.push({ key: server.declaration.key, container, configEnabled: true, ...(server.runs ? { server: server.declaration.name } : {}) });
    }
  }
  return items;
}

/** The configured state store (not yet read). */
export async function enablementStore(config: EnablementConfig, logger: Logger): Promise<EnablementStore> {
  const store = config.eventStore;
  if (store.kind === 'redis' && store.url !== undefined) {
    // Loaded only when used, like the event store's: the redis client costs a memory-store gateway ~9 MB.
    const { createRedisStore } = await import('./redis-store.js');
    return createRedisStore({ url: store.url, allowPrivateNetwork: store.allowPrivateNetwork, keyRoot: store.keyPrefix ?? DEFAULT_KEY_ROOT, logger });
  }
  return createFileStore(config.stateDir);
}

/** Reads the store and builds the enablement; rejects with an operator-actionable error when the store cannot be read. */
export async function enablementFor(config: EnablementConfig, plugins: LoadedPlugins, logger: Logger): Promise<{ enablement: Enablement; store: EnablementStore }> {
  const store = await enablementStore(config, logger);
  try {
    const stored = await store.load();
    return { enablement: new Enablement({ items: enablementItems(config, plugins), store, stored }), store };
  } catch (error) {
    await store.close();
    throw error;
  }
}
