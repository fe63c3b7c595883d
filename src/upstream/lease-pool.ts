/**
 * A bounded pool of upstream connections for sessionless (2026-era) traffic to a server with
 * `isolation: "session"`: each call leases a connection for its duration, so no two calls share
 * one at a time. At most `max` connections exist; further callers wait in a bounded queue, and
 * idle connections are closed after `idleTimeoutMs`.
 */
import { UpstreamError } from '../errors.js';
import type { UpstreamLink } from './link.js';
import type { UpstreamSlot } from './slot.js';

export interface Lease {
  link: UpstreamLink;
  release(): void;
  /** Gives the connection up as broken: it is closed, not returned to the pool. */
  discard(): Promise<void>;
}

export interface LeasePoolOptions {
  server: string;
  max: number;
  idleTimeoutMs: number;
  /** The most callers that may wait for a connection; beyond it calls fail fast. */
  maxWaiters?: number;
  createSlot(): UpstreamSlot;
}

interface IdleEntry {
  slot: UpstreamSlot;
  timer: NodeJS.Timeout;
}

export class LeasePool {
  private readonly options: LeasePoolOptions;
  private readonly idle: IdleEntry[] = [];
  private readonly waiters: Array<{ resolve(slot: UpstreamSlot): void; reject(error: Error): void }> = [];
  private total = 0;
  private closed = false;

  constructor(options: LeasePoolOptions) {
    this.options = options;
  }

  get size(): number {
    return this.total;
  }

  async acquire(): Promise<Lease> {
    if (this.closed) throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'pool closed');
    const slot = await this.takeSlot();
    try {
      const link = await slot.get();
      let released = false;
      return {
        link,
        release: () => {
          if (released) return;
          released = true;
          this.giveBack(slot);
        },
        discard: async () => {
          await slot.discard(link);
        },
      };
    } catch (error) {
      this.drop(slot);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'pool closed'));
    }
    const entries = this.idle.splice(0);
    for (const entry of entries) clearTimeout(entry.timer);
    await Promise.all(entries.map((entry) => entry.slot.close()));
  }

  private takeSlot(): Promise<UpstreamSlot> {
    const entry = this.idle.pop();
    if (entry !== undefined) {
      clearTimeout(entry.timer);
      return Promise.resolve(entry.slot);
    }
    if (this.total < this.options.max) {
      this.total++;
      return Promise.resolve(this.options.createSlot());
    }
    if (this.waiters.length >= (this.options.maxWaiters ?? 1024)) {
      return Promise.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', this.options.server, 'too many concurrent calls'));
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private giveBack(slot: UpstreamSlot): void {
    if (this.closed || slot.current === undefined) {
      this.drop(slot);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve(slot);
      return;
    }
    const timer = setTimeout(() => {
      const index = this.idle.findIndex((e) => e.slot === slot);
      if (index >= 0) {
        this.idle.splice(index, 1);
        this.drop(slot);
      }
    }, this.options.idleTimeoutMs);
    timer.unref();
    this.idle.push({ slot, timer });
  }

  /** Closes a slot and frees its place; a waiter gets a fresh slot in its stead. */
  private drop(slot: UpstreamSlot): void {
    void slot.close();
    this.total--;
    const waiter = this.waiters.shift();
    if (waiter !== undefined && !this.closed) {
      this.total++;
      waiter.resolve(this.options.createSlot());
    }
  }
}
