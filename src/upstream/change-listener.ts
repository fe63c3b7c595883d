/**
 * A 2026 upstream announces list changes only on a `subscriptions/listen` stream. One listener per
 * connection keeps such a stream open for the changes the upstream advertises, re-opening it with
 * backoff while the connection lives; while it is live, cached lists need no lifetime (see
 * list-cache.ts). Changes are delivered by the SDK to the connection's notification handler.
 */
import type { Client, ServerCapabilities } from '@modelcontextprotocol/client';
import type { Logger } from '../observability/logger.js';
import { safeReason } from './failure.js';
import type { ListKind } from './list-cache.js';

/** Re-opening gives up after this many failed attempts in a row (the connection goes on without). */
const MAX_ATTEMPTS = 6;

export interface ChangeListenerOptions {
  client: Client;
  capabilities(): ServerCapabilities;
  /** True once the connection is closed: nothing is re-opened then. */
  closed(): boolean;
  /** Called when the stream ends: changes may have been missed while it was down. */
  onLost(): void;
  logger: Logger;
}

export class ChangeListener {
  private readonly options: ChangeListenerOptions;
  private subscription: { close(): Promise<void> } | undefined;

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
    await this.subscription?.close().catch(() => undefined);
  }

  private open(attempt: number): void {
    const caps = this.options.capabilities();
    const filter = {
      ...(caps.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(caps.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(caps.resources?.listChanged ? { resourcesListChanged: true } : {}),
    };
    if (Object.keys(filter).length === 0 || this.options.closed()) return;
    this.options.client.listen(filter).then(
      (subscription) => {
        this.subscription = subscription;
        void subscription.closed.then((how) => {
          if (this.subscription === subscription) this.subscription = undefined;
          this.options.onLost();
          if (how === 'remote') this.retry(0);
        });
      },
      (error: unknown) => {
        this.options.logger.debug({ reason: safeReason(error) }, 'upstream subscriptions/listen failed');
        this.retry(attempt + 1);
      },
    );
  }

  private retry(attempt: number): void {
    if (this.options.closed() || attempt >= MAX_ATTEMPTS) return;
    const timer = setTimeout(() => this.open(attempt), Math.min(30_000, 500 * 2 ** attempt));
    timer.unref();
  }
}
