/**
 * Where audit lines go: stderr (through the batching fd sink the logger uses, `log-sink.ts`), or
 * a file rotated by size. The file sink writes each tick's lines with one synchronous write
 * (lines of one request never wait for a slow disk in a queue that a crash would lose), and
 * whatever is still waiting is written on every exit path: `close()` at shutdown and a
 * process `exit` hook (normal exit, `process.exit` after SIGTERM/SIGINT, an uncaught exception).
 *
 * Rotation: before a write would take the file past `maxBytes`, `<file>` becomes `<file>.1`,
 * `<file>.1` becomes `<file>.2` … up to `<file>.<maxFiles>`, the oldest is overwritten, and a new
 * `<file>` (mode 0600) is opened. A line is never split across files.
 *
 * A failing disk costs lines, never the process: a write error marks the sink broken (reported
 * once at error level, with the error code only) and lines are dropped from then on. Lines
 * waiting for the next tick are bounded in bytes; past the bound they are dropped and counted,
 * and the count is written as a line of its own.
 */
import { closeSync, existsSync, fstatSync, openSync, renameSync, writeSync } from 'node:fs';
import { createFdSink } from './log-sink.js';
import type { Logger } from './logger.js';

export interface AuditSink {
  write(line: string): void;
  /** Writes every waiting line now; never throws. */
  flushSync(): void;
  /** Flushes and releases the file; later lines are dropped. */
  close(): void;
}

export interface FileSinkOptions {
  path: string;
  maxBytes: number;
  maxFiles: number;
  logger: Logger;
}

const MAX_PENDING_BYTES = 8 * 1024 * 1024;

const live = new Set<AuditSink>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const sink of live) sink.flushSync();
  });
}

/** Audit lines on stderr, beside the log lines. */
export function stderrAuditSink(): AuditSink {
  const sink = createFdSink({ fd: 2, minBytes: 1, flushIntervalMs: 100, maxPendingBytes: MAX_PENDING_BYTES });
  return { write: (line) => sink.write(line), flushSync: () => sink.flushSync(), close: () => sink.flushSync() };
}

class RotatingFileSink implements AuditSink {
  private fd: number | undefined;
  private size: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  private dropped = 0;
  private scheduled = false;
  private broken = false;

  constructor(private readonly options: FileSinkOptions) {
    this.fd = openSync(options.path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  write(line: string): void {
    if (this.broken || this.fd === undefined) return;
    const bytes = Buffer.byteLength(line);
    if (this.pendingBytes + bytes > MAX_PENDING_BYTES) {
      this.dropped += 1;
      return;
    }
    this.pending.push(line);
    this.pendingBytes += bytes;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flushSync());
    }
  }

  flushSync(): void {
    this.scheduled = false;
    if (this.broken || this.fd === undefined) return;
    const lines = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.dropped > 0) {
      lines.push(`${JSON.stringify({ type: 'audit-dropped', time: new Date().toISOString(), dropped: this.dropped })}\n`);
      this.dropped = 0;
    }
    try {
      let chunk = '';
      let chunkBytes = 0;
      for (const line of lines) {
        const bytes = Buffer.byteLength(line);
        if (this.size + chunkBytes + bytes > this.options.maxBytes && this.size + chunkBytes > 0) {
          this.writeOut(chunk);
          chunk = '';
          chunkBytes = 0;
          this.rotate();
        }
        chunk += line;
        chunkBytes += bytes;
      }
      if (chunk !== '') this.writeOut(chunk);
    } catch (error) {
      this.broken = true;
      const code = (error as NodeJS.ErrnoException).code;
      this.options.logger.error({ code: typeof code === 'string' ? code : 'write failed' }, 'audit log file failed; audit lines are dropped from now on');
    }
  }

  close(): void {
    this.flushSync();
    live.delete(this);
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // Already closed: nothing left to release.
      }
      this.fd = undefined;
    }
  }

  private writeOut(chunk: string): void {
    if (chunk === '' || this.fd === undefined) return;
    const buffer = Buffer.from(chunk);
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(this.fd, buffer, offset);
    this.size += buffer.length;
  }

  private rotate(): void {
    const { path, maxFiles } = this.options;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    for (let index = maxFiles - 1; index >= 1; index--) {
      if (existsSync(`${path}.${index}`)) renameSync(`${path}.${index}`, `${path}.${index + 1}`);
    }
    renameSync(path, `${path}.1`);
    this.fd = openSync(path, 'a', 0o600);
    this.size = 0;
  }
}

/** An audit file rotated by size; throws (at start) when the file cannot be opened. */
export function fileAuditSink(options: FileSinkOptions): AuditSink {
  const sink = new RotatingFileSink(options);
  installExitHook();
  live.add(sink);
  return sink;
}
