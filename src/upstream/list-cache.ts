/**
 * The list results of one upstream connection (all pages of `tools/list`, `prompts/list`,
 * `resources/list`, `resources/templates/list`), cached until the upstream announces a change (on
 * this connection or, through `server-changes.ts`, on any other connection to the same server)
 * or, when a 2026 upstream gives a lifetime (`ttlMs`) and no live subscription reports its
 * changes, until that lifetime ends. `version` moves on every drop, so merged views know to rebuild.
 *
 * Each list also keeps what the upstream promised about it (MCP 2026-07-28, server/utilities/
 * caching): the lifetime left of its `ttlMs` and its `cacheScope`, so the gateway never tells its
 * own clients more than the upstream told it. A 2025 upstream promises nothing: lifetime 0,
 * scope private.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/client';
import { UpstreamError } from '../errors.js';

export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

export const LIST_METHOD: Record<ListKind, { method: string; capability: keyof ServerCapabilities }> = {
  tools: { method: 'tools/list', capability: 'tools' },
  prompts: { method: 'prompts/list', capability: 'prompts' },
  resources: { method: 'resources/list', capability: 'resources' },
  resourceTemplates: { method: 'resources/templates/list', capability: 'resources' },
};

export const ALL_LISTS: readonly ListKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/** What a list's source promises its reader (the 2026 `ttlMs` / `cacheScope` pair). */
export interface CacheHint {
  /** Milliseconds the list may still be considered fresh; `Infinity`: this part sets no bound. */
  ttlMs: number;
  cacheScope: 'public' | 'private';
}

/** A list and what its upstream promised about it. */
export interface HintedList {
  items: unknown[];
  hint: CacheHint;
}

/** A list the upstream does not offer: empty, and it bounds nothing. */
const NO_LIST: HintedList = Object.freeze({ items: [], hint: Object.freeze({ ttlMs: Number.POSITIVE_INFINITY, cacheScope: 'public' as const }) });

/** The most pages a list may have; a runaway cursor loop is an upstream fault, not a hang. */
const MAX_LIST_PAGES = 100;

export interface ListCacheOptions {
  server: string;
  /** One page request (already mapped to the gateway's errors). */
  fetchPage(method: string, cursor: string | undefined): Promise<Record<string, unknown>>;
  capabilities(): ServerCapabilities;
  /** True while a live subscription reports changes to this list (its lifetime then does not matter). */
  hearsChangesOf(kind: ListKind): boolean;
}

interface Entry {
  items: Promise<unknown[]>;
  /** When the gateway itself re-fetches (the upstream's lifetime, unless a subscription reports changes). */
  expiresAt: number;
  /** When the upstream's own promise ends (`fetched + ttlMs`); undefined: it gave none. */
  freshUntil: number | undefined;
  scope: 'public' | 'private';
}

export class ListCache {
  private readonly options: ListCacheOptions;
  private readonly entries = new Map<ListKind, Entry>();
  version = 0;

  constructor(options: ListCacheOptions) {
    this.options = options;
  }

  list(kind: ListKind): Promise<unknown[]> {
    return this.hinted(kind).then((list) => list.items);
  }

  /** The list with what the upstream promised about it, as of now. */
  async hinted(kind: ListKind): Promise<HintedList> {
    if (this.options.capabilities()[LIST_METHOD[kind].capability] === undefined) return NO_LIST;
    const entry = this.entry(kind);
    const items = await entry.items;
    const ttlMs = entry.freshUntil === undefined ? 0 : Math.max(0, entry.freshUntil - Date.now());
    return { items, hint: { ttlMs, cacheScope: entry.scope } };
  }

  private entry(kind: ListKind): Entry {
    const cached = this.entries.get(kind);
    if (cached !== undefined && cached.expiresAt > Date.now()) return cached;
    if (cached !== undefined) this.version++; // expired: merged views must rebuild
    const entry: Entry = { items: Promise.resolve<unknown[]>([]), expiresAt: Number.POSITIVE_INFINITY, freshUntil: undefined, scope: 'private' };
    entry.items = this.fetchAll(kind).then(
      ({ items, ttlMs, scope }) => {
        const now = Date.now();
        // SDK servers answer ttlMs 0 by default, which would send every list upstream; a live
        // subscription tells us of changes, so the list is kept until it says so.
        if (ttlMs !== undefined && !this.options.hearsChangesOf(kind)) entry.expiresAt = now + ttlMs;
        entry.freshUntil = ttlMs === undefined ? undefined : now + ttlMs;
        entry.scope = scope;
        return items;
      },
      (error: unknown) => {
        if (this.entries.get(kind) === entry) this.entries.delete(kind);
        throw error;
      },
    );
    this.entries.set(kind, entry);
    return entry;
  }

  invalidate(kinds: readonly ListKind[] = ALL_LISTS): void {
    for (const kind of kinds) this.entries.delete(kind);
    this.version++;
  }

  private async fetchAll(kind: ListKind): Promise<{ items: unknown[]; ttlMs: number | undefined; scope: 'public' | 'private' }> {
    const { method } = LIST_METHOD[kind];
    const items: unknown[] = [];
    let ttlMs: number | undefined;
    // Public only if every page says so: one private page makes the whole list private.
    let scope: 'public' | 'private' = 'public';
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.options.fetchPage(method, cursor);
      const pageItems = result[kind];
      if (Array.isArray(pageItems)) items.push(...pageItems);
      if (typeof result.ttlMs === 'number' && Number.isSafeInteger(result.ttlMs) && result.ttlMs >= 0) {
        ttlMs = Math.min(ttlMs ?? result.ttlMs, result.ttlMs);
      }
      if (result.cacheScope !== 'public') scope = 'private';
      cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
      if (cursor === undefined) return { items, ttlMs, scope };
    }
    throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, `${method} returned more than ${MAX_LIST_PAGES} pages`);
  }
}
