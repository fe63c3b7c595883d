/**
 * The places for sessions' own child processes of one stdio server (`isolation: "session"`),
 * shared by every session on every endpoint: at most `max` live at once. Each costs a whole
 * process (tens of MB for a typical node or python server), so without this a crowd of sessions
 * is a crowd of processes. The server's primary connection and its stateless pool are bounded
 * on their own (one, and `statelessPool.maxPerServer`) and are not counted here.
 */
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { RefusalLog } from '../observability/refusal-log.js';

/** One place, held from before the child is spawned until after it has exited; `release` is idempotent. */
export interface ChildHold {
  release(): void;
}

export class ChildQuota {
  readonly server: string;
  readonly max: number;
  private readonly refusals: RefusalLog;
  private held = 0;

  constructor(server: string, max: number, logger: Logger) {
    if (!Number.isInteger(max) || max < 1) throw new TypeError('max must be a positive integer');
    this.server = server;
    this.max = max;
    this.refusals = new RefusalLog(logger);
  }

  /** Places held right now. */
  get live(): number {
    return this.held;
  }

  /** A place, or undefined when all `max` are held. */
  tryHold(): ChildHold | undefined {
    if (this.held >= this.max) return undefined;
    this.held += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.held -= 1;
      },
    };
  }

  /**
   * The refusal a session gets when no place is free (names the server, never a command), and
   * the operator's line saying which limit to look at.
   */
  refuse(): GatewayError {
    this.refusals.warn(
      'SESSION_CHILD_LIMIT',
      { server: this.server, limit: this.max },
      'session process refused: the server runs sessions.maxChildrenPerServer session processes; sessions that stay busy hold them, idle ones give them back after sessions.childIdleTimeoutMs',
    );
    return new GatewayError(
      'SESSION_CHILD_LIMIT',
      `upstream "${this.server}" is serving its limit of ${this.max} session processes; retry later, or end idle sessions`,
      { server: this.server },
    );
  }
}
