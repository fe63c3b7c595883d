/**
 * A slot holds the current link of one logical upstream connection and replaces it when it dies:
 * reconnects are spaced by capped exponential backoff (with jitter, so a fleet does not stampede a
 * recovering server). Eager slots (the per-server primary) reconnect on their own; lazy slots
 * (per-session) reconnect on next use. Listeners subscribe once and follow every link the slot has.
 */
import { UpstreamError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamLink } from './link.js';
import type { LinkEvent } from './link.js';

export type SlotState = 'idle' | 'connecting' | 'ready' | 'error' | 'closed';

export interface SlotOptions {
  server: string;
  connect(): Promise<UpstreamLink>;
  logger: Logger;
  /** Reconnect in the background after an unexpected close or failed attempt. */
  eager?: boolean;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/** A caller waits at most this long for a backoff window before failing fast. */
const MAX_WAIT_FOR_BACKOFF_MS = 2_000;

export function backoffDelay(failures: number, initialMs: number, maxMs: number, random = Math.random): number {
  if (failures <= 0) return 0;
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 30));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export class UpstreamSlot {
  readonly server: string;
  private readonly options: SlotOptions;
  private link: UpstreamLink | undefined;
  private connecting: Promise<UpstreamLink> | undefined;
  private failures = 0;
  private nextAttemptAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(event: LinkEvent) => void>();
  private readonly stateListeners = new Set<(state: SlotState) => void>();
  private isClosed = false;
  lastError: Error | undefined;

  constructor(options: SlotOptions) {
    this.server = options.server;
    this.options = options;
  }

  get state(): SlotState {
    if (this.isClosed) return 'closed';
    if (this.link !== undefined && !this.link.closed) return 'ready';
    if (this.connecting !== undefined) return 'connecting';
    return this.lastError === undefined ? 'idle' : 'error';
  }

  /** The live link, if any, without connecting. */
  get current(): UpstreamLink | undefined {
    return this.link !== undefined && !this.link.closed ? this.link : undefined;
  }

  on(listener: (event: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Follows `state`: called after every change (connecting, ready, error, closed). */
  onStateChange(listener: (state: SlotState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private announceState(): void {
    const state = this.state;
    for (const listener of this.stateListeners) {
      try {
        listener(state);
      } catch (error) {
        this.options.logger.warn({ server: this.server, err: describe(error) }, 'slot state listener failed');
      }
    }
  }

  /** The live link, connecting (or reconnecting) as needed. */
  async get(): Promise<UpstreamLink> {
    if (this.isClosed) throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'connection closed');
    const live = this.current;
    if (live !== undefined) return live;
    if (this.connecting !== undefined) return this.connecting;
    const wait = this.nextAttemptAt - Date.now();
    if (wait > MAX_WAIT_FOR_BACKOFF_MS) {
      throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'is restarting; try again shortly', this.lastError);
    }
    if (wait > 0) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      // Another caller may have connected, or started to, while this one waited.
      const now = this.current;
      if (now !== undefined) return now;
      if (this.connecting !== undefined) return this.connecting;
    }
    return this.attempt();
  }

  /**
   * Drops a link that failed (e.g. its HTTP session expired upstream) so the next `get`
   * reconnects. Only that link: if another caller already replaced it, the new one stays.
   */
  async discard(expected?: UpstreamLink): Promise<void> {
    const link = this.link;
    if (link === undefined || (expected !== undefined && link !== expected)) return;
    this.link = undefined;
    await link.close();
  }

  async close(): Promise<void> {
    this.isClosed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const pending = this.connecting;
    await this.discard(this.link);
    if (pending !== undefined) await pending.then((l) => l.close(), () => undefined);
    this.announceState();
  }

  /**
   * Opens a closed slot again (a server stopped and then started at run time): it starts over
   * with no failures remembered, and an eager slot connects at once. No-op unless closed.
   */
  reopen(): void {
    if (!this.isClosed) return;
    this.isClosed = false;
    this.failures = 0;
    this.lastError = undefined;
    this.nextAttemptAt = 0;
    this.announceState();
  }

  /**
   * Forgets the failures so far, so the next `get` tries at once: for a connection whose next
   * attempt differs from the failed ones (a new credential), not for retrying the same.
   */
  forgetFailures(): void {
    this.failures = 0;
    this.nextAttemptAt = 0;
  }

  private attempt(): Promise<UpstreamLink> {
    const attempt = this.options
      .connect()
      .then((link) => {
        if (this.isClosed) {
          void link.close();
          throw new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, 'connection closed');
        }
        const live = this.current;
        if (live !== undefined) {
          // Never two live links in one slot: the extra one would leak (and its child with it).
          void link.close();
          return live;
        }
        this.link = link;
        this.failures = 0;
        this.lastError = undefined;
        link.on((event) => this.relay(link, event));
        this.announceState();
        return link;
      })
      .catch((error: unknown) => {
        this.recordFailure(error instanceof Error ? error : new Error(String(error)));
        throw error;
      })
      .finally(() => {
        if (this.connecting === attempt) this.connecting = undefined;
        this.announceState();
      });
    this.connecting = attempt;
    this.announceState();
    return attempt;
  }

  private relay(link: UpstreamLink, event: LinkEvent): void {
    if (event.kind === 'closed' && this.link === link) {
      this.link = undefined;
      if (!this.isClosed && event.reason !== 'closed by gateway') {
        this.options.logger.warn({ server: this.server, reason: event.reason }, 'upstream connection lost');
        this.recordFailure(new UpstreamError('UPSTREAM_UNAVAILABLE', this.server, event.reason));
      }
      this.announceState();
    }
    for (const listener of this.listeners) listener(event);
  }

  private recordFailure(error: Error): void {
    this.lastError = error;
    this.failures++;
    const delay = backoffDelay(this.failures, this.options.initialBackoffMs ?? 250, this.options.maxBackoffMs ?? 30_000);
    // The first reconnect after a crash is immediate: one lost process should cost one error.
    this.nextAttemptAt = this.failures === 1 ? Date.now() : Date.now() + delay;
    if (this.options.eager && !this.isClosed && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (this.isClosed || this.current !== undefined || this.connecting !== undefined) return;
        this.attempt().catch((err: unknown) =>
          this.options.logger.warn({ server: this.server, err: describe(err) }, 'upstream reconnect failed'),
        );
      }, delay);
      this.timer.unref();
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
