/**
 * The bounded registry of 2025-era sessions. Ids are cryptographically random (UUIDv4 from
 * `crypto.randomUUID`); a session untouched for `idleTimeoutMs` expires and is closed (which
 * closes its upstream connections and reaps its child processes); at `max` sessions a new one is
 * refused rather than evicting a live client's session.
 */
import { LRUCache } from 'lru-cache';

export interface ClosableSession {
  readonly id: string;
  close(): Promise<void>;
}

export interface SessionRegistryOptions {
  max: number;
  idleTimeoutMs: number;
  onClosed?: (id: string, reason: 'expired' | 'deleted' | 'shutdown') => void;
}

export class SessionRegistry<S extends ClosableSession> {
  private readonly cache: LRUCache<string, S>;
  private readonly options: SessionRegistryOptions;
  private shuttingDown = false;

  constructor(options: SessionRegistryOptions) {
    this.options = options;
    this.cache = new LRUCache<string, S>({
      max: options.max,
      ttl: options.idleTimeoutMs,
      updateAgeOnGet: true,
      ttlAutopurge: true,
      dispose: (session, id, reason) => {
        const why = this.shuttingDown ? 'shutdown' : reason === 'delete' ? 'deleted' : 'expired';
        this.options.onClosed?.(id, why);
        void session.close();
      },
    });
  }

  get size(): number {
    return this.cache.size;
  }

  /** True when another session may be created now (expired ones are purged first). */
  hasRoom(): boolean {
    if (this.cache.size < this.options.max) return true;
    this.cache.purgeStale();
    return this.cache.size < this.options.max;
  }

  add(session: S): void {
    this.cache.set(session.id, session);
  }

  /** The live session, refreshing its idle timer; undefined when unknown or expired. */
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
    const sessions = [...this.cache.values()];
    this.cache.clear();
    await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  }
}
