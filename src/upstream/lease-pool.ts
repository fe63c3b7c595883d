/**
 * A bounded pool of upstream connections for sessionless (2026-era) traffic to a server with
 * `isolation: "session"`: each call leases a connection for its duration, so no two calls share
 * one at a time. At most `max` connections exist; idle ones are closed after `idleTimeoutMs`.
 *
 * Isolation between principals (attribution.ts states the invariant): a connection goes back to
 * the pool only once the upstream has answered every request sent on it. A call that ended
 * without its answer (the client hung up, a timeout) has been cancelled upstream, but the
 * upstream may still be working on it, and on stdio nothing on the wire would tell its messages
 * from the next call's; so its connection waits up to `cancelGraceMs` for that answer, serving no
 * one, and is closed and replaced if none comes.
 *
 * Starvation: a caller waits at most `maxWaitMs` for a connection, then gets a "busy, retry"
 * error instead of hanging; and one authenticated principal holds at most `maxPerPrincipal`
 * connections of a server at once (a connection waiting out a cancelled call's grace still counts
 * against the principal that cancelled), so one client cannot hold the whole pool — for instance
 * with calls suspended for input (`input_required`) that it never resumes. Without
 * authentication there is one anonymous principal, which the cap does not apply to.
 */
import { UpstreamError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { HeldConnection } from './connection-policy.js';
import type { UpstreamSlot } from './slot.js';

export interface LeasePoolOptions {
  /** Told each time a caller has to wait for a connection (metrics). */
  onWait?: () => void;
  server: string;
  max: number;
  idleTimeoutMs: number;
  /** How long `acquire` waits for a connection before failing with `UPSTREAM_BUSY`. */
  maxWaitMs: number;
  /** Most connections one authenticated principal may hold at once. */
  maxPerPrincipal: number;
  /** How long a connection with an unanswered (cancelled) request waits for the answer. */
  cancelGraceMs: number;
  /** The most callers that may wait for a connection; beyond it calls fail fast. */
  maxWaiters?: number;
  logger: Logger;
  createSlot(): UpstreamSlot;
}

interface IdleEntry {
  slot: UpstreamSlot;
  timer: NodeJS.Timeout;
}

interface Waiter {
  principal: string | undefined;
  resolve(slot: UpstreamSlot): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
}

export class LeasePool {
  private readonly options: LeasePoolOptions;
  private readonly idle: IdleEntry[] = [];
  private readonly waiters: Waiter[] = [];
  /** Slots leased, or waiting out a cancelled call's grace: closed with the pool. */
  private readonly busy = new Set<UpstreamSlot>();
  /** Connections held per authenticated principal (leased or in grace). */
  private readonly held = new Map<string, number>();
  private total = 0;
  private closed = false;

  constructor(options: LeasePoolOptions) {
    this.options = options;
  }

  get size(): number {
    return this.total;
  }

  /**
   * A connection for one call of `principal` (undefined: authentication is off). Rejects with
   * `UPSTREAM_BUSY` when none frees up within `maxWaitMs`.
   */
  async acquire(principal?: string): Promise<HeldConnection> {
    if (this.closed) throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'pool closed');
    const slot = await this.takeSlot(principal);
    try {
      const link = await slot.get();
      let released = false;
      return {
        link,
        release: () => {
          if (released) return;
          released = true;
          this.giveBack(slot, principal);
        },
        // Broken: closed, not returned to the pool.
        drop: async () => {
          await slot.discard(link);
        },
      };
    } catch (error) {
      this.settle(slot, principal, false);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'pool closed'));
    }
    const entries = this.idle.splice(0);
    for (const entry of entries) clearTimeout(entry.timer);
    // Idle ones are gone now (leased ones are counted out when given back): a reopened pool has its room.
    this.total -= entries.length;
    await Promise.all([...entries.map((entry) => entry.slot.close()), ...[...this.busy].map((slot) => slot.close())]);
  }

  /** Takes calls again after `close` (the server was stopped and is started again). */
  reopen(): void {
    this.closed = false;
  }

  /** How many connections `principal` holds right now. */
  private heldBy(principal: string): number {
    return this.held.get(principal) ?? 0;
  }

  private underCap(principal: string | undefined): boolean {
    return principal === undefined || this.heldBy(principal) < this.options.maxPerPrincipal;
  }

  private hasRoom(): boolean {
    return this.idle.length > 0 || this.total < this.options.max;
  }

  /** An idle slot or a new one, charged to `principal`; the caller checked there is room. */
  private grant(principal: string | undefined): UpstreamSlot {
    const entry = this.idle.pop();
    let slot: UpstreamSlot;
    if (entry !== undefined) {
      clearTimeout(entry.timer);
      slot = entry.slot;
    } else {
      this.total++;
      slot = this.options.createSlot();
    }
    this.busy.add(slot);
    if (principal !== undefined) this.held.set(principal, this.heldBy(principal) + 1);
    return slot;
  }

  private takeSlot(principal: string | undefined): Promise<UpstreamSlot> {
    // Room is handed to waiters as soon as it appears, so any still waiting now are at their cap.
    if (this.underCap(principal) && this.hasRoom()) return Promise.resolve(this.grant(principal));
    if (this.options.maxWaitMs === 0 || this.waiters.length >= (this.options.maxWaiters ?? 1024)) {
      return Promise.reject(this.busyError());
    }
    this.options.onWait?.();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { principal, resolve, reject };
      waiter.timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(this.busyError());
      }, this.options.maxWaitMs);
      this.waiters.push(waiter);
    });
  }

  private busyError(): UpstreamError {
    return new UpstreamError('UPSTREAM_BUSY', this.options.server, 'busy: every pooled connection is in use; retry shortly');
  }

  /**
   * A lease ended. The connection serves again only once the upstream has answered every
   * request sent on it; a cancelled call's connection waits out the grace, then is replaced.
   */
  private giveBack(slot: UpstreamSlot, principal: string | undefined): void {
    const link = slot.current;
    if (this.closed || link === undefined) {
      this.settle(slot, principal, false);
      return;
    }
    if (link.idle) {
      this.settle(slot, principal, true);
      return;
    }
    void link.whenIdle(this.options.cancelGraceMs).then(async (answered) => {
      if (!answered && !this.closed) {
        this.options.logger.debug({ server: this.options.server }, 'a cancelled call was not answered in time; replacing its connection');
      }
      this.settle(slot, principal, answered && slot.current === link);
    });
  }

  /** The slot is free again: kept idle (or handed on), or closed; its holder's charge is lifted. */
  private settle(slot: UpstreamSlot, principal: string | undefined, keep: boolean): void {
    this.busy.delete(slot);
    if (principal !== undefined) {
      const count = this.heldBy(principal) - 1;
      if (count > 0) this.held.set(principal, count);
      else this.held.delete(principal);
    }
    if (keep && !this.closed) {
      const timer = setTimeout(() => {
        const index = this.idle.findIndex((e) => e.slot === slot);
        if (index < 0) return;
        this.idle.splice(index, 1);
        this.total--;
        void slot.close();
      }, this.options.idleTimeoutMs);
      timer.unref();
      this.idle.push({ slot, timer });
    } else {
      this.total--;
      void slot.close();
    }
    this.serveWaiters();
  }

  /** Hands free room to waiters in arrival order, skipping those whose principal is at its cap. */
  private serveWaiters(): void {
    if (this.closed) return;
    for (let index = 0; index < this.waiters.length && this.hasRoom(); ) {
      const waiter = this.waiters[index]!;
      if (!this.underCap(waiter.principal)) {
        index++;
        continue;
      }
      this.waiters.splice(index, 1);
      clearTimeout(waiter.timer);
      waiter.resolve(this.grant(waiter.principal));
    }
  }
}
