/**
 * The bounded registry of one endpoint's 2025-era sessions. Ids are cryptographically random
 * (UUIDv4 from `crypto.randomUUID`); a session with no call or stream open for `idleTimeoutMs`
 * expires and is closed (which closes its upstream connections and reaps its child processes) —
 * a long call or an open GET stream keeps it alive. How many sessions may exist is decided
 * before one is created, gateway-wide (`session-admission.ts`): a new session is refused rather
 * than evicting a live client's.
 */
import { LRUCache } from 'lru-cache';

export interface ClosableSession {
  readonly id: string;
  close(): Promise<void>;
  /** When the session became idle (ms epoch), or undefined while it is busy (a call or stream open). */
  idleSince(): number | undefined;
}

export interface SessionRegistryOptions {
  max: number;
  idleTimeoutMs: number;
  onClosed?: (id: string, reason: 'expired' | 'deleted' | 'shutdown') => void;
}

export class SessionRegistry<S extends ClosableSession> {
  private readonly cache: LRUCache<string, S>;
  private readonly options: SessionRegistryOptions;
  private readonly sweeper: NodeJS.Timeout;
  private shuttingDown = false;
  private expiring = false;

  constructor(options: SessionRegistryOptions) {
    this.options = options;
    this.cache = new LRUCache<string, S>({
      // The cap is enforced by the session admission before a session is created; the cache's own
      // bound has headroom so it can never evict (and close) a live session.
      max: options.max * 2,
      dispose: (session, id) => {
        const why = this.shuttingDown ? 'shutdown' : this.expiring ? 'expired' : 'deleted';
        this.options.onClosed?.(id, why);
        void session.close();
      },
    });
    this.sweeper = setInterval(() => this.expireIdle(), Math.max(50, Math.min(options.idleTimeoutMs / 4, 30_000)));
    this.sweeper.unref();
  }

  /** Closes every session idle for longer than the timeout. */
  expireIdle(now = Date.now()): void {
    const expired: string[] = [];
    for (const [id, session] of this.cache.entries()) {
      const since = session.idleSince();
      if (since !== undefined && now - since >= this.options.idleTimeoutMs) expired.push(id);
    }
    this.expiring = true;
    try {
      for (const id of expired) this.cache.delete(id);
    } finally {
      this.expiring = false;
    }
  }

  get size(): number {
    return this.cache.size;
  }

  add(session: S): void {
    this.cache.set(session.id, session);
  }

  /** The live session; undefined when unknown or expired. */
  get(id: string): S | undefined {
    return this.cache.get(id);
  }

  /** Removes and closes a session. */
  delete(id: string): void {
    this.cache.delete(id);
  }

  /** Closes every session (shutdown). */
  async closeAll(): Promise<void> {
    this.shuttingDown = true;
    clearInterval(this.sweeper);
    const sessions = [...this.cache.values()];
    this.cache.clear();
    await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  }
}
