/**
 * The list results of one upstream connection (all pages of `tools/list`, `prompts/list`,
 * `resources/list`, `resources/templates/list`), cached until the upstream announces a change or,
 * when a 2026 upstream gives a lifetime (`ttlMs`) and no live subscription reports its changes,
 * until that lifetime ends. `version` moves on every drop, so merged views know to rebuild.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/client';
import { UpstreamError } from '../errors.js';
import type { RpcResult } from '../rpc/pass-through.js';

export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

export const LIST_METHOD: Record<ListKind, { method: string; capability: keyof ServerCapabilities }> = {
  tools: { method: 'tools/list', capability: 'tools' },
  prompts: { method: 'prompts/list', capability: 'prompts' },
  resources: { method: 'resources/list', capability: 'resources' },
  resourceTemplates: { method: 'resources/templates/list', capability: 'resources' },
};

export const ALL_LISTS: readonly ListKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/** The most pages a list may have; a runaway cursor loop is an upstream fault, not a hang. */
const MAX_LIST_PAGES = 100;

export interface ListCacheOptions {
  server: string;
  /** One page request (already mapped to the gateway's errors). */
  fetchPage(method: string, cursor: string | undefined): Promise<RpcResult>;
  capabilities(): ServerCapabilities;
  /** True while a live subscription reports changes to this list (its lifetime then does not matter). */
  hearsChangesOf(kind: ListKind): boolean;
}

export class ListCache {
  private readonly options: ListCacheOptions;
  private readonly entries = new Map<ListKind, { items: Promise<unknown[]>; expiresAt: number }>();
  version = 0;

  constructor(options: ListCacheOptions) {
    this.options = options;
  }

  list(kind: ListKind): Promise<unknown[]> {
    if (this.options.capabilities()[LIST_METHOD[kind].capability] === undefined) return Promise.resolve([]);
    const cached = this.entries.get(kind);
    if (cached !== undefined && cached.expiresAt > Date.now()) return cached.items;
    if (cached !== undefined) this.version++; // expired: merged views must rebuild
    const entry = { items: Promise.resolve<unknown[]>([]), expiresAt: Number.POSITIVE_INFINITY };
    entry.items = this.fetchAll(kind).then(
      ({ items, ttlMs }) => {
        // SDK servers answer ttlMs 0 by default, which would send every list upstream; a live
        // subscription tells us of changes, so the list is kept until it says so.
        if (ttlMs !== undefined && !this.options.hearsChangesOf(kind)) entry.expiresAt = Date.now() + ttlMs;
        return items;
      },
      (error: unknown) => {
        if (this.entries.get(kind) === entry) this.entries.delete(kind);
        throw error;
      },
    );
    this.entries.set(kind, entry);
    return entry.items;
  }

  invalidate(kinds: readonly ListKind[] = ALL_LISTS): void {
    for (const kind of kinds) this.entries.delete(kind);
    this.version++;
  }

  private async fetchAll(kind: ListKind): Promise<{ items: unknown[]; ttlMs: number | undefined }> {
    const { method } = LIST_METHOD[kind];
    const items: unknown[] = [];
    let ttlMs: number | undefined;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.options.fetchPage(method, cursor);
      const pageItems = result[kind];
      if (Array.isArray(pageItems)) items.push(...pageItems);
      if (typeof result.ttlMs === 'number' && result.ttlMs >= 0) ttlMs = Math.min(ttlMs ?? result.ttlMs, result.ttlMs);
      cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
      if (cursor === undefined) return { items, ttlMs };
    }
    throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, `${method} returned more than ${MAX_LIST_PAGES} pages`);
  }
}
