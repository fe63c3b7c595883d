/**
 * Where global and workspace decisions live across restarts: a JSON file in the state directory
 * (file-store.ts), or Redis when the event store is Redis (redis-store.ts), so replicas sharing
 * that Redis start from the same decisions. Only decisions are stored (decisions.ts keeps just
 * what differs from the inherited value), under durable keys; session decisions are never
 * stored — they end with their session.
 */
import type { StoredDecisions } from './decisions.js';

/** Most workspaces with stored decisions: workspace URIs come from clients, so the set is bounded. */
export const MAX_STORED_WORKSPACES = 1_000;

export type StoredScope = { readonly scope: 'global' } | { readonly scope: 'workspace'; readonly workspace: string };

export interface EnablementStore {
  /** `file` or `redis`, for logs. */
  readonly kind: 'file' | 'redis';
  /** Every stored decision; rejects with an operator-actionable error when the store cannot be read. */
  load(): Promise<StoredDecisions>;
  /** Sets one decision (`value`), or removes it (`undefined`). Rejects when it could not be written. */
  write(where: StoredScope, key: string, value: boolean | undefined): Promise<void>;
  close(): Promise<void>;
}

/** Mutable copy of stored decisions, the in-memory side of both stores. */
export class DecisionTable implements StoredDecisions {
  readonly global = new Map<string, boolean>();
  readonly workspaces = new Map<string, Map<string, boolean>>();

  apply(where: StoredScope, key: string, value: boolean | undefined): void {
    const table = where.scope === 'global' ? this.global : this.workspaceTable(where.workspace, value !== undefined);
    if (table === undefined) return;
    if (value === undefined) table.delete(key);
    else table.set(key, value);
    if (where.scope === 'workspace' && table.size === 0) this.workspaces.delete(where.workspace);
  }

  private workspaceTable(workspace: string, create: boolean): Map<string, boolean> | undefined {
    let table = this.workspaces.get(workspace);
    if (table === undefined && create) {
      table = new Map();
      this.workspaces.set(workspace, table);
    }
    return table;
  }
}
