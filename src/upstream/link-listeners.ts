/**
 * The subscribers to one link's events (`link-event.ts`): the sessions and scopes that list
 * through it, the task table, `server-changes.ts`. A listener that throws is logged and the others
 * still hear the event, so one faulty subscriber cannot stop a `list_changed` reaching the rest.
 */
import type { Logger } from '../observability/logger.js';
import type { LinkEvent } from './link-event.js';

export class LinkListeners {
  private readonly listeners = new Set<(event: LinkEvent) => void>();

  constructor(private readonly logger: Logger) {}

  /** Subscribes; returns the unsubscribe function. */
  add(listener: (event: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: LinkEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.warn({ err: error }, 'link listener failed');
      }
    }
  }
}
