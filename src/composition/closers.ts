/**
 * The one shutdown of a composition: every part that opens something notes how to close it, in
 * the order the parts open; closing runs the closers in reverse (the last opened closes first,
 * while everything it depends on is still open). The same list closes a start that failed half
 * way, so a failure never leaves open what opened before it.
 */
import type { Logger } from '../observability/logger.js';

interface Closer {
  readonly part: string;
  readonly close: () => unknown;
}

export class Closers {
  private readonly opened: Closer[] = [];
  private closing: Promise<void> | undefined;
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  /** `part` has just opened; `close` runs at shutdown, after every part opened later has closed. */
  add(part: string, close: () => unknown): void {
    if (this.closing !== undefined) throw new Error(`${part} opened after shutdown began`);
    this.opened.push({ part, close });
  }

  /**
   * Runs every closer once, the last added first, each awaited before the next; one that fails
   * is logged (its error's name only: errors can carry URLs) and the others still run. Idempotent.
   */
  closeAll(): Promise<void> {
    this.closing ??= (async () => {
      for (const { part, close } of this.opened.splice(0).reverse()) {
        try {
          await close();
        } catch (error) {
          this.logger.warn({ part, err: (error as Error | undefined)?.name }, 'closing a part failed');
        }
      }
    })();
    return this.closing;
  }

  /**
   * Runs `build`, which opens parts into this list; when it throws, everything opened so far is
   * closed (in reverse) before the error goes on.
   */
  async compose<T>(build: (closers: Closers) => Promise<T>): Promise<T> {
    try {
      return await build(this);
    } catch (error) {
      await this.closeAll();
      throw error;
    }
  }
}
