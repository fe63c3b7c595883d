/** Splitting a child's stderr into bounded log lines. */
import { asBuffer, ChunkQueue } from './chunk-queue.js';

export interface LineSplitter {
  /** Feeds one chunk; returns the complete, non-empty lines it ended (without `\r\n`). */
  push(chunk: Uint8Array): string[];
  /** Returns the unterminated last line, if any (call when the stream ends). */
  end(): string[];
}

/**
 * Splits a byte stream (a child's stderr) into lines, keeping at most `maxLineBytes` of each:
 * the rest of an over-long line is dropped and the kept part is marked `…[truncated]`.
 */
export function createLineSplitter(maxLineBytes = 8 * 1024): LineSplitter {
  const pending = new ChunkQueue();
  let truncated = false;
  const emit = (tail: Buffer, lines: string[]): void => {
    const bytes = pending.take(tail);
    let end = bytes.length;
    if (!truncated && end > 0 && bytes[end - 1] === 0x0d) end--;
    const text = bytes.toString('utf8', 0, end);
    if (truncated) lines.push(`${text}…[truncated]`);
    else if (text.trim() !== '') lines.push(text);
    truncated = false;
  };
  const keep = (part: Buffer): void => {
    if (truncated) return;
    const room = maxLineBytes - pending.bytes;
    if (part.length > room) truncated = true;
    if (room > 0) pending.push(Buffer.from(part.subarray(0, room)));
  };
  return {
    push(chunk) {
      const lines: string[] = [];
      const buf = asBuffer(chunk);
      let start = 0;
      for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
        keep(buf.subarray(start, nl));
        emit(Buffer.alloc(0), lines);
        start = nl + 1;
      }
      if (start < buf.length) keep(buf.subarray(start));
      return lines;
    },
    end() {
      const lines: string[] = [];
      if (pending.bytes > 0 || truncated) emit(Buffer.alloc(0), lines);
      return lines;
    },
  };
}
