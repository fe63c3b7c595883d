/**
 * A 2026 upstream announces list changes only on a `subscriptions/listen` stream. One listener per
 * connection keeps such a stream open for the changes the upstream advertises, re-opening it with
 * backoff while the connection lives; while it is live, cached lists need no lifetime (see
 * list-cache.ts). The stream is the peer's long-lived request (peer.ts): open once the upstream
 * acknowledges it (`notifications/subscriptions/acknowledged`, within the request timeout); the
 * changes it carries reach the link's notification handler like any other notification.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from '../observability/logger.js';
import type { ListKind } from './list-cache.js';
import type { PeerStream, RpcPeer } from './peer.js';

/** Re-opening gives up after this many failed attempts in a row (the connection goes on without). */
const MAX_ATTEMPTS = 6;

export interface ChangeListenerOptions {
  peer: RpcPeer;
  /** How long the upstream has to acknowledge a stream. */
  ackTimeoutMs: number;
  capabilities(): ServerCapabilities;
  /** True once the connection is closed: nothing is re-opened then. */
  closed(): boolean;
  /** Called when the stream ends: changes may have been missed while it was down. */
  onLost(): void;
  logger: Logger;
}

export class ChangeListener {
  private readonly options: ChangeListenerOptions;
  private subscription: PeerStream | undefined;
  private pending: PeerStream | undefined;

  constructor(options: ChangeListenerOptions) {
    this.options = options;
  }

  start(): void {
    this.open(0);
  }

  /** True while a live stream reports changes to this list. */
  hears(kind: ListKind): boolean {
    if (this.subscription === undefined) return false;
    const caps = this.options.capabilities();
    if (kind === 'tools') return caps.tools?.listChanged === true;
    if (kind === 'prompts') return caps.prompts?.listChanged === true;
    return caps.resources?.listChanged === true;
  }

  async close(): Promise<void> {
    this.pending?.close();
    this.subscription?.close();
  }

  private open(attempt: number): void {
    const caps = this.options.capabilities();
    const filter = {
      ...(caps.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(caps.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(caps.resources?.listChanged ? { resourcesListChanged: true } : {}),
    };
    if (Object.keys(filter).length === 0 || this.options.closed()) return;
    let acknowledged = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      this.options.logger.debug('upstream subscriptions/listen was not acknowledged in time');
      timedOut = true;
      stream.close();
    }, this.options.ackTimeoutMs);
    timer.unref();
    const stream = this.options.peer.stream('subscriptions/listen', { notifications: filter }, {
      onAck: () => {
        clearTimeout(timer);
        acknowledged = true;
        this.pending = undefined;
        this.subscription = stream;
      },
      onEnd: (how) => {
        clearTimeout(timer);
        if (this.pending === stream) this.pending = undefined;
        if (!acknowledged) {
          this.options.logger.debug('upstream subscriptions/listen failed');
          if (how === 'remote' || timedOut) this.retry(attempt + 1);
          return;
        }
        if (this.subscription === stream) this.subscription = undefined;
        this.options.onLost();
        if (how === 'remote') this.retry(0);
      },
    });
    this.pending = stream;
  }

  private retry(attempt: number): void {
    if (this.options.closed() || attempt >= MAX_ATTEMPTS) return;
    const timer = setTimeout(() => this.open(attempt), Math.min(30_000, 500 * 2 ** attempt));
    timer.unref();
  }
}
