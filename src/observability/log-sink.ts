/**
 * Where the process logger's lines go: a file descriptor (stderr), written in batches, that never
 * keeps the process alive and never takes it down.
 *
 * Why not `pino.destination()` (SonicBoom): its `flushSync` sleeps 100 ms and retries, forever,
 * on any write error but EAGAIN, so the one synchronous flush on an exit path meets a stderr whose
 * reader went away (`npm start 2>&1 | tee log`, then Ctrl-C: tee dies first) with EPIPE, and
 * blocks the event loop for good — SIGTERM included. A sink that fails must lose lines, not the
 * process: here any write error other than EAGAIN marks the sink broken and every line after it
 * is dropped; EAGAIN (a full pipe) is retried a bounded number of times, then the batch is
 * dropped too. Lines waiting for a slow reader are bounded in bytes; beyond the bound new lines
 * are dropped and counted, and the count is written once the reader catches up.
 *
 * Ordering: one asynchronous write at a time, batches in order. `flushSync` (exit paths) writes
 * what no asynchronous write has taken yet.
 */
import { writeSync, write as writeAsync } from 'node:fs';

export interface FdSinkOptions {
  fd: number;
  /** A batch is written once it holds at least this many bytes. */
  minBytes: number;
  /** …and at least this often while anything is waiting (ms; the timer does not keep the process alive). */
  flushIntervalMs: number;
  /** Bytes of lines kept while the reader is slow; beyond it lines are dropped (counted). */
  maxPendingBytes: number;
}

export interface FdSink {
  write(line: string): void;
  /** Writes every waiting line now, synchronously; never throws, never waits without bound. */
  flushSync(): void;
  /** True once a write failed for good (the reader is gone): lines are dropped from then on. */
  readonly broken: boolean;
}

/** Synchronous attempts on a full pipe before the batch is dropped (each after a short pause). */
const SYNC_EAGAIN_ATTEMPTS = 20;
const SYNC_EAGAIN_PAUSE_MS = 5;
const ASYNC_EAGAIN_RETRY_MS = 100;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

function isAgain(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'EAGAIN' || code === 'EBUSY';
}

function droppedLine(count: number): string {
  return `${JSON.stringify({ level: 40, time: Date.now(), name: 'portcullis', dropped: count, msg: 'log lines dropped: the log reader was not keeping up' })}\n`;
}

/** Every sink still able to write, flushed synchronously when the process exits (any way but a signal's default action). */
const live = new Set<WeakRef<FdSinkImpl>>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const ref of live) ref.deref()?.flushSync();
  });
}

class FdSinkImpl implements FdSink {
  private readonly options: FdSinkOptions;
  private readonly ref = new WeakRef(this);
  private pending: string[] = [];
  private pendingBytes = 0;
  private dropped = 0;
  private writing = false;
  private failed = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(options: FdSinkOptions) {
    this.options = options;
    this.timer = setInterval(() => this.startWrite(), options.flushIntervalMs);
    this.timer.unref();
    live.add(this.ref);
    installExitHook();
  }

  get broken(): boolean {
    return this.failed;
  }

  write(line: string): void {
    if (this.failed) return;
    const bytes = Buffer.byteLength(line);
    if (this.pendingBytes + bytes > this.options.maxPendingBytes) {
      this.dropped += 1;
      return;
    }
    this.pending.push(line);
    this.pendingBytes += bytes;
    if (this.pendingBytes >= this.options.minBytes) this.startWrite();
  }

  flushSync(): void {
    if (this.failed) return;
    let data = Buffer.from(this.take());
    let attempts = 0;
    while (data.length > 0) {
      try {
        data = data.subarray(writeSync(this.options.fd, data));
        attempts = 0;
      } catch (error) {
        attempts += 1;
        if (!isAgain(error)) return this.fail();
        if (attempts >= SYNC_EAGAIN_ATTEMPTS) return; // a reader stuck for good: drop the batch, keep the process
        Atomics.wait(sleeper, 0, 0, SYNC_EAGAIN_PAUSE_MS);
      }
    }
  }

  /** Everything waiting, the drop count first; the buffer is left empty. */
  private take(): string {
    const head = this.dropped > 0 ? droppedLine(this.dropped) : '';
    this.dropped = 0;
    const text = head + this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    return text;
  }

  private startWrite(): void {
    if (this.writing || this.failed || this.retry !== undefined) return;
    if (this.pendingBytes === 0 && this.dropped === 0) return;
    this.writing = true;
    this.writeOut(Buffer.from(this.take()));
  }

  private writeOut(data: Buffer): void {
    writeAsync(this.options.fd, data, 0, data.length, null, (error, written) => {
      if (error !== null) {
        if (!isAgain(error)) return this.fail();
        // A full pipe: try the same bytes again shortly; new lines queue behind them (bounded).
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.writeOut(data);
        }, ASYNC_EAGAIN_RETRY_MS);
        this.retry.unref();
        return;
      }
      if (written < data.length) return this.writeOut(data.subarray(written));
      this.writing = false;
      if (this.pendingBytes >= this.options.minBytes) this.startWrite();
    });
  }

  private fail(): void {
    this.failed = true;
    this.writing = false;
    this.pending = [];
    this.pendingBytes = 0;
    clearInterval(this.timer);
    if (this.retry !== undefined) clearTimeout(this.retry);
    live.delete(this.ref);
  }
}

/**
 * Makes a failed write on the process's stdout or stderr stream (EPIPE once the reader is gone) a
 * dropped write: without an 'error' listener Node turns it into an uncaught exception. Used for
 * the Ready line and the CLI's own messages; log lines go through {@link createFdSink}.
 */
export function dropStdioWriteErrors(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.listenerCount('error') === 0) stream.on('error', () => undefined);
  }
}

/** A batching sink on `fd` (see the module comment for what it does when the reader goes away). */
export function createFdSink(options: FdSinkOptions): FdSink {
  for (const key of ['minBytes', 'flushIntervalMs', 'maxPendingBytes'] as const) {
    if (!Number.isInteger(options[key]) || options[key] <= 0) throw new TypeError(`log sink: ${key} must be a positive integer`);
  }
  if (!Number.isInteger(options.fd) || options.fd < 0) throw new TypeError('log sink: fd must be a file descriptor');
  return new FdSinkImpl(options);
}
