/**
 * A 2025 session's own connection to one `isolation: "session"` server, opened on the session's
 * first use of that server (a call, read, get, completion or subscription), not when the session
 * initialises: a client that only initialises and lists costs no process. For a stdio server the
 * connection is a child process, so it also:
 *
 * - holds a place of the server's `ChildQuota` from before the spawn until the child has exited;
 *   with no place free the use is refused with a clear error naming the server (a stateful
 *   server's calls cannot be moved to another connection without losing what it remembers);
 * - is closed after `idleTimeoutMs` without a call in flight (the session stays; the next use
 *   spawns a fresh child), unless the session holds resource subscriptions on it, which only a
 *   live connection can serve.
 *
 * A log level the session set is remembered and sent to every connection opened later. The
 * connection is initialised with the capabilities the session's client declared, and nothing else.
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from '../../observability/logger.js';
import type { ChildQuota, ChildHold } from '../../upstream/child-quota.js';
import type { UpstreamLink } from '../../upstream/link.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { DownstreamSink } from '../../rpc/sink.js';
import { UpstreamSlot } from '../../upstream/slot.js';
import type { CredentialOwner } from '../../upstream/credentials/credential-owner.js';
import type { HeldConnection, OwnConnection } from '../../upstream/connection-policy.js';

export interface SessionConnectionOptions {
  server: string;
  registry: UpstreamRegistry;
  /** The session's standalone stream: what no call can be credited with goes there. */
  owner: DownstreamSink;
  /** What the session's client declared in `initialize` (read when the connection opens, after it). */
  clientCapabilities: () => ClientCapabilities | undefined;
  /** Where the server's session children are counted (stdio); absent: not capped. */
  quota: ChildQuota | undefined;
  /** Close the connection after this long without a call; absent: keep it for the session's life. */
  idleTimeoutMs: number | undefined;
  /** Whose connection this is, for per-user upstream credentials (credential-owner.ts). */
  credentialOwner?: CredentialOwner;
  logger: Logger;
}

export class SessionConnection implements OwnConnection {
  readonly slot: UpstreamSlot;
  private readonly options: SessionConnectionOptions;
  private hold: ChildHold | undefined;
  private busy = 0;
  private subscriptions = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private logLevel: Record<string, unknown> | undefined;
  private closed = false;

  constructor(options: SessionConnectionOptions) {
    this.options = options;
    this.slot = new UpstreamSlot({ server: options.server, logger: options.logger, connect: () => this.connect() });
  }

  /** The live link, if the session has one to this server now. */
  get current(): UpstreamLink | undefined {
    return this.slot.current;
  }

  /**
   * The connection for one call, opened (or re-opened after an idle close) as needed; refused
   * with `SESSION_CHILD_LIMIT` when it would need a child and the server has no place free.
   */
  async acquire(): Promise<HeldConnection> {
    this.busy += 1;
    this.stopIdleClock();
    try {
      if (this.options.quota !== undefined && this.hold === undefined) {
        this.hold = this.options.quota.tryHold();
        if (this.hold === undefined) throw this.options.quota.refuse();
      }
      const link = await this.slot.get();
      let released = false;
      return {
        link,
        drop: () => this.slot.discard(link),
        release: () => {
          if (released) return;
          released = true;
          this.settle();
        },
      };
    } catch (error) {
      // No child came of it: the place goes back (a concurrent caller that got one keeps it).
      if (this.slot.current === undefined && this.slot.state !== 'connecting') this.giveBackPlace();
      this.settle();
      throw error;
    }
  }

  /** Counts resource subscriptions held on this connection: while any is, it is not closed for idleness. */
  noteSubscription(subscribed: boolean): void {
    this.subscriptions = Math.max(0, this.subscriptions + (subscribed ? 1 : -1));
    if (this.subscriptions === 0) this.startIdleClock();
    else this.stopIdleClock();
  }

  /**
   * Keeps `link` open while something lives on it (a task): like a subscription, it is not
   * closed for idleness until the returned release is called. Undefined when `link` is not this
   * connection's live one (nothing to keep).
   */
  pin(link: UpstreamLink): (() => void) | undefined {
    if (this.slot.current !== link) return undefined;
    this.noteSubscription(true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.noteSubscription(false);
    };
  }

  /** Sets the level on the live connection, if any, and remembers it for connections opened later. */
  async setLogLevel(params: Record<string, unknown>): Promise<void> {
    this.logLevel = params;
    const link = this.slot.current;
    if (link !== undefined && link.capabilities.logging !== undefined) {
      await link.request('logging/setLevel', params, { sink: this.options.owner });
    }
  }

  /** Closes the connection for good (the session ends), and gives its place back once the child is gone. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopIdleClock();
    await this.slot.close();
    this.giveBackPlace();
  }

  private async connect(): Promise<UpstreamLink> {
    const { registry, server, owner } = this.options;
    const credentialOwner = this.options.credentialOwner;
    const link = await registry.connect(server, {
      owner,
      era: '2025',
      clientCapabilities: this.options.clientCapabilities() ?? {},
      ...(credentialOwner === undefined ? {} : { credentialOwner }),
    });
    if (this.logLevel !== undefined && link.capabilities.logging !== undefined) {
      await link.request('logging/setLevel', this.logLevel, { sink: owner }).catch(() => undefined);
    }
    return link;
  }

  /** One call less in flight; the idle clock runs again when none is. */
  private settle(): void {
    this.busy -= 1;
    if (this.busy === 0) this.startIdleClock();
  }

  private startIdleClock(): void {
    const { idleTimeoutMs } = this.options;
    if (idleTimeoutMs === undefined || this.closed || this.busy > 0 || this.subscriptions > 0 || this.idleTimer !== undefined) return;
    if (this.slot.current === undefined && this.hold === undefined) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      void this.closeIdle();
    }, idleTimeoutMs);
    this.idleTimer.unref();
  }

  private stopIdleClock(): void {
    if (this.idleTimer === undefined) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** The idle close: the child is stopped and its place freed; the session's next use spawns a fresh one. */
  private async closeIdle(): Promise<void> {
    if (this.closed || this.busy > 0 || this.subscriptions > 0) return;
    const hold = this.hold;
    this.hold = undefined;
    const link = this.slot.current;
    if (link !== undefined) {
      this.options.logger.debug({ server: this.options.server }, 'closing an idle session connection');
      await this.slot.discard(link);
    }
    hold?.release();
  }

  private giveBackPlace(): void {
    this.hold?.release();
    this.hold = undefined;
  }
}
