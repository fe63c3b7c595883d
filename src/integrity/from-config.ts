/**
 * The tool integrity of a starting gateway: its mode and first-use rule from the config (the
 * policy's minimum already applied), its pins in Redis when the event store is Redis (the store
 * replicas share), else in `<stateDir>/tool-pins.json`.
 */
import { DEFAULT_KEY_ROOT } from '../cluster/cluster-keys.js';
import type { GatewayConfig } from '../config/schema.js';
import type { IntegrityAuditRecord } from '../observability/audit-log.js';
import type { Logger } from '../observability/logger.js';
import { createFilePinStore, type PinStore } from './pin-store.js';
import type { PinEvent } from './server-pins.js';
import { ToolIntegrity } from './tool-integrity.js';

type IntegrityConfig = Pick<GatewayConfig, 'toolIntegrity' | 'stateDir' | 'eventStore' | 'catalogue'>;

async function pinStore(config: IntegrityConfig, logger: Logger): Promise<PinStore> {
  const store = config.eventStore;
  if (store.kind === 'redis' && store.url !== undefined) {
    // Loaded only when used, like the event store's: the redis client costs a memory-store gateway ~9 MB.
    const { createRedisPinStore } = await import('./redis-pin-store.js');
    return createRedisPinStore({ url: store.url, allowPrivateNetwork: store.allowPrivateNetwork, keyRoot: store.keyPrefix ?? DEFAULT_KEY_ROOT, logger });
  }
  return createFilePinStore(config.stateDir);
}

/** Opens the pin store and reads every server's pins; rejects with an operator-actionable error when it cannot. */
export async function toolIntegrityFor(
  config: IntegrityConfig,
  servers: readonly string[],
  isServer: (server: string) => boolean,
  allNames: () => Promise<ReadonlyMap<string, readonly string[]>>,
  logger: Logger,
  onEvent: (event: PinEvent) => void,
): Promise<{ integrity: ToolIntegrity; store: PinStore }> {
  const store = await pinStore(config, logger);
  try {
    const integrity = await ToolIntegrity.open({
      mode: config.toolIntegrity.mode,
      trustOnFirstUse: config.toolIntegrity.trustOnFirstUse,
      store,
      servers,
      isServer,
      allNames,
      separator: config.catalogue.separator,
      logger,
      onEvent,
    });
    return { integrity, store };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** A pin event as the audit log writes it: names and hashes, never a description's text. */
export function integrityAuditRecord(event: PinEvent, time = Date.now()): IntegrityAuditRecord {
  switch (event.kind) {
    case 'pin':
      return { time, event: 'pin', principal: event.by, server: event.server, tool: event.tool, hash: event.hash };
    case 'change':
      return { time, event: 'change', server: event.server, tool: event.tool, hash: event.hash, before: event.before, change: event.change, flags: event.flags };
    case 'flood':
      return { time, event: 'flood', server: event.server, tool: null };
    case 'approve':
    case 'reject':
      return { time, event: event.kind, principal: event.by, server: event.server, tool: event.tool, hash: event.hash, before: event.before };
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}
