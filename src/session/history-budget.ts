/**
 * Byte budgets of retained event history (policies/README.md, "limits"): the
 * bytes of events one session keeps, and the bytes every session of this process keeps
 * together. The event count limit alone did not bound memory: a benign upstream streaming 15 MiB
 * answers filled the heap within a few hundred calls, taking every session down with it.
 *
 * One ledger per store. Each session's history opens an account and records every event it keeps
 * (its serialised size); after each record the ledger evicts, oldest first, until both budgets
 * hold: the session's own oldest events for the session budget, the process's oldest events
 * (whichever session holds them) for the total. The owner of an event does the actual dropping
 * through the callback it opened its account with; a resume past a dropped event is answered
 * 410 by the store (its links are gone), never replayed with a gap.
 *
 * Bookkeeping is one small object per retained event (both queues share it); entries of events
 * their owner dropped on its own (the count limit, a closed session) are skipped when the
 * process queue reaches them and compacted away once they outnumber the live ones, so the
 * ledger stays proportional to what is retained.
 */

export interface HistoryBudgetOptions {
  /** Bytes one session may keep; an event larger than this is not kept at all. */
  maxSessionBytes: number;
  /** Bytes all sessions of the process may keep together. */
  maxTotalBytes: number;
}

/** One session's side of the ledger. */
export interface HistoryAccount {
  /** Bytes this session keeps now. */
  readonly bytes: number;
  /**
   * Records one event the session just kept, then evicts (through the owners' callbacks) until
   * the session's and the process's budgets hold. The event just recorded may be the one evicted.
   */
  record(bytes: number): void;
  /** The owner dropped its oldest recorded event on its own (e.g. its event count limit). */
  droppedOldest(): void;
  /** The owner dropped everything it recorded (session closed or history discarded). */
  clear(): void;
}

export interface HistoryBudget {
  readonly maxSessionBytes: number;
  readonly maxTotalBytes: number;
  /** Bytes every account keeps together right now. */
  readonly totalBytes: number;
  /** Events every account keeps together right now. */
  readonly totalEvents: number;
  /** Opens an account; `evictOldest` must drop the owner's oldest recorded event. */
  open(evictOldest: () => void): HistoryAccount;
}

interface Entry {
  readonly bytes: number;
  /** Cleared when the event is gone (evicted, dropped by its owner, account cleared). */
  owner: Account | undefined;
}

/** A FIFO over an array with a moving head (amortised O(1) shift). */
class Queue<T> {
  items: T[] = [];
  head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined as T;
    this.head += 1;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Keeps only the items `keep` accepts, in order. */
  retain(keep: (item: T) => boolean): void {
    this.items = this.items.slice(this.head).filter(keep);
    this.head = 0;
  }
}

class Account implements HistoryAccount {
  readonly entries = new Queue<Entry>();
  bytes = 0;

  constructor(
    private readonly ledger: Ledger,
    readonly evictOldest: () => void,
  ) {}

  record(bytes: number): void {
    const entry: Entry = { bytes, owner: this };
    this.entries.push(entry);
    this.bytes += bytes;
    this.ledger.added(entry);
    while (this.bytes > this.ledger.maxSessionBytes && this.entries.length > 0) this.evict();
    this.ledger.enforceTotal();
  }

  droppedOldest(): void {
    this.release();
  }

  clear(): void {
    while (this.entries.length > 0) this.release();
  }

  /**
   * Drops the oldest event: the owner forgets it, the ledger stops counting it. `queued`: its
   * entry is still in the process queue (false when the process queue just took it out).
   */
  evict(queued = true): void {
    this.release(queued);
    this.evictOldest();
  }

  private release(queued = true): void {
    const entry = this.entries.shift();
    if (entry === undefined) return;
    entry.owner = undefined;
    this.bytes -= entry.bytes;
    this.ledger.removed(entry, queued);
  }
}

class Ledger implements HistoryBudget {
  readonly maxSessionBytes: number;
  readonly maxTotalBytes: number;
  totalBytes = 0;
  private readonly order = new Queue<Entry>();
  private live = 0;
  private dead = 0;

  constructor(options: HistoryBudgetOptions) {
    this.maxSessionBytes = options.maxSessionBytes;
    this.maxTotalBytes = options.maxTotalBytes;
  }

  get totalEvents(): number {
    return this.live;
  }

  open(evictOldest: () => void): HistoryAccount {
    return new Account(this, evictOldest);
  }

  added(entry: Entry): void {
    this.order.push(entry);
    this.totalBytes += entry.bytes;
    this.live += 1;
  }

  removed(entry: Entry, queued: boolean): void {
    this.totalBytes -= entry.bytes;
    this.live -= 1;
    if (!queued) return;
    this.dead += 1;
    if (this.dead > 1024 && this.dead > this.live) {
      this.order.retain((item) => item.owner !== undefined);
      this.dead = 0;
    }
  }

  /** Evicts the process's oldest events until the total holds. */
  enforceTotal(): void {
    while (this.totalBytes > this.maxTotalBytes) {
      const entry = this.order.shift();
      if (entry === undefined) return;
      const owner = entry.owner;
      if (owner === undefined) {
        this.dead -= 1;
        continue;
      }
      // Every account records in the process's order, so its oldest entry is this one.
      owner.evict(false);
    }
  }
}

export function createHistoryBudget(options: HistoryBudgetOptions): HistoryBudget {
  const { maxSessionBytes, maxTotalBytes } = options;
  if (!Number.isSafeInteger(maxSessionBytes) || maxSessionBytes < 1) throw new TypeError('eventStore.maxSessionBytes must be a positive integer');
  if (!Number.isSafeInteger(maxTotalBytes) || maxTotalBytes < 1) throw new TypeError('eventStore.maxTotalBytes must be a positive integer');
  return new Ledger(options);
}

/** The defaults when a store is built without budgets (tests, library use): the default policy's. */
export const DEFAULT_HISTORY_BUDGET: Readonly<HistoryBudgetOptions> = Object.freeze({
  maxSessionBytes: 16 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
});
