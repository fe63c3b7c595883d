/**
 * Writing to a stdio child's stdin: messages written in the same turn of the event loop leave in
 * one `writev`, and a full pipe makes writers wait for 'drain' (back-pressure, so a slow child
 * cannot make the gateway buffer without bound). The process that owns the pipe is
 * `stdio-process.ts`.
 */
import type { Writable } from 'node:stream';

/** One child's stdin; `notConnected` is the error a writer gets when the pipe closes under it. */
export class StdinWriter {
  /** stdin is corked until the loop's check phase (see `write`). */
  private corked = false;
  private drain: Promise<void> | undefined;

  constructor(
    private readonly stdin: Writable,
    private readonly notConnected: () => Error,
  ) {}

  /**
   * Writes bytes; waits for the pipe to drain when it is full. The first write of a turn corks
   * stdin, the loop's check phase (`setImmediate`) uncorks it. Under load one pipe write per
   * message was a visible share of the gateway's CPU; each inbound request is its own I/O
   * callback, so uncorking on `process.nextTick` coalesced nothing (1.01 writes per call at c=16,
   * against 0.17 with `setImmediate`, measured with strace). Corked writes still count towards
   * the stream's buffer, so a full pipe still makes `write` wait for 'drain'.
   */
  async write(bytes: Buffer): Promise<void> {
    const { stdin } = this;
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      setImmediate(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    if (stdin.write(bytes)) return;
    await this.waitForDrain();
  }

  /** One shared wait per full pipe, so many blocked senders add one listener pair, not many. */
  private waitForDrain(): Promise<void> {
    const { stdin } = this;
    this.drain ??= new Promise<void>((resolve, reject) => {
      const settle = (error?: Error): void => {
        stdin.off('drain', onDrain);
        stdin.off('close', onClose);
        this.drain = undefined;
        if (error === undefined) resolve();
        else reject(error);
      };
      const onDrain = (): void => settle();
      const onClose = (): void => settle(this.notConnected());
      stdin.on('drain', onDrain);
      stdin.on('close', onClose);
    });
    return this.drain;
  }
}
