/**
 * What a stdio child writes to stderr: split into bounded lines, masked for secrets, logged at
 * debug only (docs/decisions.md, "stdio children"), and the last few lines kept, quotable, for
 * the message a start failure shows (`start-failure.ts`). stderr is the child's own log; it never
 * reaches a client.
 */
import type { Logger } from 'pino';
import { createLineSplitter } from './line-splitter.js';
import { quotableLine, STDERR_TAIL_LINES } from './start-failure.js';

/** The marker `createLineSplitter` puts on a line it cut. */
const TRUNCATED = '…[truncated]';

/** One child's stderr, fed chunk by chunk. */
export class StderrLog {
  private readonly lines = createLineSplitter();
  private readonly tailLines: string[] = [];

  /**
   * `log` already carries the server name; `redact` masks secrets, and `cut` tells it the text
   * was truncated at its end (a secret may be half there).
   */
  constructor(
    private readonly log: Logger,
    private readonly redact: (text: string, cut?: boolean) => string,
  ) {}

  /** The last few non-blank lines, redacted and quotable: what a start failure quotes. */
  get tail(): readonly string[] {
    return this.tailLines;
  }

  /** Logs the lines that `chunk` completes. */
  push(chunk: Buffer): void {
    this.record(this.lines.push(chunk));
  }

  /** Logs the unterminated last line, if any (the stream has ended). */
  end(): void {
    this.record(this.lines.end());
  }

  private record(lines: string[]): void {
    for (const line of lines) {
      const cut = line.endsWith(TRUNCATED);
      const text = cut ? `${this.redact(line.slice(0, -TRUNCATED.length), true)}${TRUNCATED}` : this.redact(line);
      this.log.debug({ stderr: text }, 'stdio server stderr');
      if (text.trim() === '') continue;
      this.tailLines.push(quotableLine(text));
      if (this.tailLines.length > STDERR_TAIL_LINES) this.tailLines.shift();
    }
  }
}
