/**
 * The connections of one `isolation: "principal"` server: one per authenticated principal,
 * workspace and era, shared by that principal's calls of that era, so a server that keeps state
 * per connection (toggles, session resources, a note book) keeps it across all of them, and never
 * shows it to another principal. The era is the one the connection speaks (the connection policy
 * settles it, `connectionEra`): a 2026 request reaches a 2026 upstream on a 2026-era connection
 * (its `Mcp-Param-*` headers, 2026 listens), a 2025 session on a 2025-era one; where the kind
 * speaks 2025 only (stdio, HTTP+SSE), both eras of a principal share its one connection.
 *
 * - A connection is opened on first use (a call, read, get, completion or subscription) and
 *   closed after `idleTimeoutMs` with no call in flight and no resource subscription on it; the
 *   next use opens a fresh one (what the upstream kept is then lost, as after a restart).
 * - At most `max` live at once per server (for stdio, that many child processes), counted until
 *   the child has exited. A new key past the cap first closes the least recently used idle
 *   connection; with none idle the use is refused (`PRINCIPAL_CONNECTION_LIMIT`, naming the
 *   server), never moved onto another principal's connection.
 * - One authenticated principal holds at most `maxPerPrincipal` of them (one per workspace and
 *   era), so it cannot take every place by inventing workspaces. Without authentication every client is
 *   one anonymous principal: one connection per workspace for everybody, not capped beyond `max`.
 *
 * Keys are compared exactly: the principal is what authentication proved, the workspace what
 * the client said (`_meta["portcullis/workspace"]`, see routing/workspace.ts); a workspace never
 * widens what a principal reaches, it only splits one principal's state further.
 */
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { RefusalLog } from '../observability/refusal-log.js';
import type { Era } from '../rpc/era.js';
import type { HeldConnection } from './connection-policy.js';
import type { UpstreamLink } from './link.js';
import type { LinkEvent } from './link.js';
import { UpstreamSlot } from './slot.js';

/**
 * Whose connection: the authenticated principal (undefined without auth), the workspace, if any,
 * and the era the connection speaks (absent: 2025).
 */
export interface ConnectionKey {
  readonly principal: string | undefined;
  readonly workspace: string | undefined;
  readonly era?: Era | undefined;
}

/** One string per key; principal, workspace and era cannot run into each other (JSON array). */
export function connectionKeyId(key: ConnectionKey): string {
  return JSON.stringify([key.principal ?? null, key.workspace ?? null, key.era ?? '2025']);
}

export interface PrincipalConnectionsOptions {
  server: string;
  /** Connections alive at once for this server (`sessions.maxChildrenPerServer`). */
  max: number;
  /** Connections one authenticated principal may hold at once (its workspaces). */
  maxPerPrincipal: number;
  /** A connection with no call in flight and no subscription is closed after this long. */
  idleTimeoutMs: number;
  /** Opens a fresh connection to the server for `key` (its principal's credentials, if any). */
  connect(key: ConnectionKey): Promise<UpstreamLink>;
  logger: Logger;
}

interface Holder {
  readonly id: string;
  readonly key: ConnectionKey;
  readonly slot: UpstreamSlot;
  busy: number;
  subscriptions: number;
  lastUsed: number;
  idleTimer: NodeJS.Timeout | undefined;
  closing: Promise<void> | undefined;
}

export class PrincipalConnections {
  readonly server: string;
  private readonly options: PrincipalConnectionsOptions;
  private readonly holders = new Map<string, Holder>();
  private readonly listeners = new Set<(key: ConnectionKey, event: LinkEvent) => void>();
  private readonly refusals: RefusalLog;
  private closed = false;

  constructor(options: PrincipalConnectionsOptions) {
    for (const field of ['max', 'maxPerPrincipal', 'idleTimeoutMs'] as const) {
      if (!Number.isInteger(options[field]) || options[field] < 1) throw new TypeError(`${field} must be a positive integer`);
    }
    this.server = options.server;
    this.options = options;
    this.refusals = new RefusalLog(options.logger);
  }

  /** Connections held right now (closing ones included: their child may still run). */
  get size(): number {
    return this.holders.size;
  }

  /** The live link of `key`, without opening one. */
  current(key: ConnectionKey): UpstreamLink | undefined {
    const holder = this.holders.get(connectionKeyId(key));
    return holder === undefined || holder.closing !== undefined ? undefined : holder.slot.current;
  }

  /** Events of every connection (list changes, resource updates), with the key they belong to. */
  on(listener: (key: ConnectionKey, event: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The connection of `key` for one call, opened as needed. Rejects with
   * `PRINCIPAL_CONNECTION_LIMIT` when it would need a new place and none can be freed.
   */
  async acquire(key: ConnectionKey): Promise<HeldConnection> {
    const holder = await this.holderFor(key);
    holder.busy += 1;
    holder.lastUsed = Date.now();
    this.stopIdleClock(holder);
    let link: UpstreamLink;
    try {
      link = await holder.slot.get();
    } catch (error) {
      this.settle(holder);
      throw error;
    }
    let released = false;
    return {
      link,
      drop: () => holder.slot.discard(link),
      release: () => {
        if (released) return;
        released = true;
        this.settle(holder);
      },
    };
  }

  /** Counts resource subscriptions on `key`'s connection: while any is held, it is not closed for idleness. */
  noteSubscription(key: ConnectionKey, subscribed: boolean): void {
    const holder = this.holders.get(connectionKeyId(key));
    if (holder === undefined || holder.closing !== undefined) return;
    holder.subscriptions = Math.max(0, holder.subscriptions + (subscribed ? 1 : -1));
    if (holder.subscriptions === 0) this.startIdleClock(holder);
    else this.stopIdleClock(holder);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.holders.values()].map((holder) => this.retire(holder)));
  }

  /** Opens connections again after `close` (the server was stopped and is started again). */
  reopen(): void {
    this.closed = false;
  }

  /** The holder of `key`: the live one, or a new one once a place is free. */
  private async holderFor(key: ConnectionKey): Promise<Holder> {
    const id = connectionKeyId(key);
    // Each pass either returns or waits for one connection to finish closing: bounded by `max + 1`.
    for (let pass = 0; pass <= this.options.max + 1; pass++) {
      if (this.closed) throw new GatewayError('SHUTTING_DOWN', `upstream "${this.server}": gateway is shutting down`, { server: this.server });
      const existing = this.holders.get(id);
      if (existing?.closing !== undefined) {
        await existing.closing;
        continue;
      }
      if (existing !== undefined) return existing;
      // At its share, a principal's new workspace may only take the place of its own idle one.
      const atShare = key.principal !== undefined && this.heldBy(key.principal) >= this.options.maxPerPrincipal;
      if (!atShare && this.holders.size < this.options.max) return this.open(key, id);
      const victim = this.leastRecentlyUsedIdle(atShare ? key.principal : undefined);
      if (victim === undefined) throw this.refuse(atShare ? 'principal' : 'server');
      this.options.logger.debug({ server: this.server }, 'closing the least recently used idle principal connection to make room');
      await this.retire(victim);
    }
    throw this.refuse('server');
  }

  private open(key: ConnectionKey, id: string): Holder {
    const slot = new UpstreamSlot({ server: this.server, logger: this.options.logger, connect: () => this.options.connect(key) });
    const holder: Holder = { id, key, slot, busy: 0, subscriptions: 0, lastUsed: Date.now(), idleTimer: undefined, closing: undefined };
    slot.on((event) => {
      for (const listener of this.listeners) listener(key, event);
    });
    this.holders.set(id, holder);
    return holder;
  }

  private heldBy(principal: string): number {
    let count = 0;
    for (const holder of this.holders.values()) if (holder.key.principal === principal) count++;
    return count;
  }

  /** The idle connection used longest ago (of `principal` only, when given). */
  private leastRecentlyUsedIdle(principal?: string): Holder | undefined {
    let victim: Holder | undefined;
    for (const holder of this.holders.values()) {
      if (holder.busy > 0 || holder.subscriptions > 0 || holder.closing !== undefined) continue;
      if (principal !== undefined && holder.key.principal !== principal) continue;
      if (victim === undefined || holder.lastUsed < victim.lastUsed) victim = holder;
    }
    return victim;
  }

  /** One call less in flight; the idle clock runs again when none is. */
  private settle(holder: Holder): void {
    holder.busy -= 1;
    holder.lastUsed = Date.now();
    this.startIdleClock(holder);
  }

  private startIdleClock(holder: Holder): void {
    if (this.closed || holder.busy > 0 || holder.subscriptions > 0 || holder.idleTimer !== undefined || holder.closing !== undefined) return;
    holder.idleTimer = setTimeout(() => {
      holder.idleTimer = undefined;
      if (holder.busy > 0 || holder.subscriptions > 0) return;
      this.options.logger.debug({ server: this.server }, 'closing an idle principal connection');
      void this.retire(holder);
    }, this.options.idleTimeoutMs);
    holder.idleTimer.unref();
  }

  private stopIdleClock(holder: Holder): void {
    if (holder.idleTimer === undefined) return;
    clearTimeout(holder.idleTimer);
    holder.idleTimer = undefined;
  }

  /** Closes the connection and frees its place once it is gone (its child exited). Idempotent. */
  private retire(holder: Holder): Promise<void> {
    this.stopIdleClock(holder);
    holder.closing ??= holder.slot.close().catch(() => undefined).finally(() => {
      if (this.holders.get(holder.id) === holder) this.holders.delete(holder.id);
    });
    return holder.closing;
  }

  /** The client's error (names the server and the limit, never a principal) and the operator's line. */
  private refuse(which: 'server' | 'principal'): GatewayError {
    const limit = which === 'server' ? this.options.max : this.options.maxPerPrincipal;
    this.refusals.warn(
      `PRINCIPAL_CONNECTION_LIMIT:${which}`,
      { server: this.server, limit },
      which === 'server'
        ? 'principal connection refused: the server has sessions.maxChildrenPerServer principal connections busy; idle ones close after sessions.childIdleTimeoutMs'
        : 'principal connection refused: this principal holds its share of the server\'s connections (one per workspace)',
    );
    return new GatewayError(
      'PRINCIPAL_CONNECTION_LIMIT',
      which === 'server'
        ? `upstream "${this.server}" is serving its limit of ${limit} principal connections; retry later`
        : `upstream "${this.server}": this principal already holds ${limit} connections (one per workspace); retry later, or use fewer workspaces`,
      { server: this.server },
    );
  }
}
