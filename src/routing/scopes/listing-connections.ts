/**
 * Where a 2026-07-28 request's lists come from, for servers a 2025-era upstream serves with
 * `isolation: "session"`. A 2025 server tailors its lists to the capabilities its connection
 * declared at `initialize` (server-everything registers `get-roots-list`,
 * `trigger-sampling-request`, the elicitation tools only for clients that declared roots,
 * sampling, elicitation), and the primary declares none. A 2026 request declares its own
 * capabilities (`_meta`, per request), so its lists come from a connection initialised with the
 * part of them a pooled connection can honour — the same part its calls' pooled connection
 * declares (rpc/client-capabilities.ts) — one list-only connection per server and per distinct
 * set, kept for the next request that declares the same:
 * - the key is canonical (sampling, form / url elicitation, roots: at most 15 sets); a request
 *   that declares none of them lists from the primary, as before;
 * - at most `maxSets` sets are kept (default 4), least recently used first out (their
 *   connections closed; a later request opens them again);
 * - such a connection only lists: it owns no call, so any server→client request on it is refused
 *   and its notifications go nowhere but the list caches (a `list_changed` drops every cached list
 *   of the server, server-changes.ts).
 * A 2026-era upstream gets capabilities with each request and tailors per request: its primary
 * serves every set. `shared` and `principal` servers are not concerned (their lists come from
 * the connection their calls use).
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../observability/logger.js';
import { elicitationModes } from '../../rpc/client-capabilities.js';
import type { UpstreamLink } from '../../upstream/link.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import { UpstreamSlot } from '../../upstream/slot.js';

export const DEFAULT_MAX_LISTING_SETS = 4;

/**
 * The part of `declared` a pooled connection can honour, as a canonical key and the capabilities
 * to initialise with; undefined when that part is empty (the primary then serves the lists).
 */
export function listingSet(declared: ClientCapabilities | undefined): { key: string; capabilities: ClientCapabilities } | undefined {
  if (declared === undefined || declared === null || typeof declared !== 'object') return undefined;
  const capabilities: ClientCapabilities = {};
  const parts: string[] = [];
  if (declared.elicitation !== undefined) {
    const modes = elicitationModes(declared.elicitation);
    const elicitation: { form?: Record<string, never>; url?: Record<string, never> } = {};
    if (modes.form) elicitation.form = {};
    if (modes.url) elicitation.url = {};
    if (modes.form || modes.url) capabilities.elicitation = elicitation;
    if (modes.form) parts.push('elicitation.form');
    if (modes.url) parts.push('elicitation.url');
  }
  if (declared.roots !== undefined) {
    capabilities.roots = {};
    parts.push('roots');
  }
  if (declared.sampling !== undefined) {
    capabilities.sampling = {};
    parts.push('sampling');
  }
  return parts.length === 0 ? undefined : { key: parts.join(','), capabilities };
}

export interface ListingConnectionsOptions {
  registry: UpstreamRegistry;
  logger: Logger;
  maxSets?: number;
}

type Slots = Map<string, UpstreamSlot>;

export class ListingConnections {
  private readonly registry: UpstreamRegistry;
  private readonly logger: Logger;
  private readonly sets: LRUCache<string, Slots>;

  constructor(options: ListingConnectionsOptions) {
    this.registry = options.registry;
    this.logger = options.logger;
    this.sets = new LRUCache<string, Slots>({
      max: options.maxSets ?? DEFAULT_MAX_LISTING_SETS,
      dispose: (slots) => {
        for (const slot of slots.values()) void slot.close().catch(() => undefined);
      },
    });
  }

  /** Connections held right now (open or opening), over every set. */
  get size(): number {
    let count = 0;
    for (const slots of this.sets.values()) count += slots.size;
    return count;
  }

  /**
   * The link `server`'s lists come from for a request declaring `set`; undefined when the
   * primary's serve it (no set, a server not of this kind, or a 2026-era upstream).
   */
  linkFor(server: string, set: ReturnType<typeof listingSet>): Promise<UpstreamLink> | undefined {
    if (set === undefined) return undefined;
    const entry = this.registry.entry(server);
    if (entry.config.isolation !== 'session' || entry.primary.current?.era !== '2025') return undefined;
    let slots = this.sets.get(set.key);
    if (slots === undefined) {
      slots = new Map();
      this.sets.set(set.key, slots);
    }
    let slot = slots.get(server);
    if (slot === undefined) {
      const capabilities = set.capabilities;
      slot = new UpstreamSlot({ server, logger: this.logger, connect: () => this.registry.connect(server, { clientCapabilities: capabilities }) });
      slots.set(server, slot);
    }
    return slot.get();
  }

  async close(): Promise<void> {
    const closing = [...this.sets.values()].flatMap((slots) => [...slots.values()].map((slot) => slot.close().catch(() => undefined)));
    this.sets.clear();
    await Promise.all(closing);
  }
}
