/**
 * The stdio upstream wire: one supervised child process (`stdio-process.ts`) speaking MCP
 * JSON-RPC on its stdin/stdout, behind the `Wire` interface (a dumb pipe; protocol logic stays in
 * the link's peer above it, peer.ts). This file frames and unframes messages, runs the `auto`
 * framing negotiation (`framing-negotiation.ts`) and maps what goes wrong to `GatewayError`s that
 * name only the server: never the command, its arguments, environment values or the child's output.
 * Its options, their checks and the redaction compiled from them are `stdio-options.ts`.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { GatewayError } from '../errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, type DecodeEvent, type Framing, type MessageDecoder } from './framing.js';
import { createFramingNegotiation, createInboundDecoder, type FramingNegotiation } from './framing-negotiation.js';
import { messageTooLarge } from '../net/dispatch-hop.js';
import { isRpcMessage, type Wire } from './peer.js';
import { codeOf, StdioProcess, stdioServerError, type ChildExitStatus } from './stdio-process.js';
import {
  DEFAULT_DETECT_WINDOW_MS,
  DEFAULT_KILL_GRACE_MS,
  stdioRedactor,
  validateStdioOptions,
  type StdioUpstreamTransportOptions,
} from './stdio-options.js';

export { killAllStdioChildren } from './process-group.js';
export type { ChildExitStatus } from './stdio-process.js';
export type { StdioUpstreamTransportOptions } from './stdio-options.js';

/**
 * A supervised stdio child behind the `Wire` interface. Framing `auto` (the default in
 * config) is negotiated as `framing-negotiation.ts` describes; this class carries out the
 * negotiation's decisions and runs its detection window (`detectWindowMs`).
 */
export class StdioUpstreamTransport implements Wire {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  private readonly serverName: string;
  private readonly log: Logger;
  private readonly detectWindowMs: number;
  private readonly redact: (text: string, cut?: boolean) => string;
  private readonly child: StdioProcess;
  private readonly decoder: MessageDecoder;
  private readonly maxMessageBytes: number;
  private readonly negotiation: FramingNegotiation;

  private closing: Promise<void> | undefined;
  private readonly finished: Promise<void>;
  private resolveFinished!: () => void;
  private detectTimer: NodeJS.Timeout | undefined;

  constructor(options: StdioUpstreamTransportOptions) {
    validateStdioOptions(options);
    this.serverName = options.serverName;
    this.log = options.logger.child({ server: options.serverName });
    this.detectWindowMs = options.detectWindowMs ?? DEFAULT_DETECT_WINDOW_MS;
    const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.maxMessageBytes = maxMessageBytes;
    this.redact = stdioRedactor(options);
    this.negotiation = createFramingNegotiation(options.framing);
    this.decoder = createInboundDecoder(options.framing, { maxMessageBytes });
    const { serverName, command, args, env, cwd } = options;
    this.child = new StdioProcess(
      {
        serverName,
        command,
        args,
        env,
        cwd,
        killGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
        log: this.log,
        redact: this.redact,
        ...(options.census === undefined ? {} : { census: options.census }),
      },
      {
        onStdout: (chunk) => this.handleChunk(chunk),
        onError: (error) => this.report(error),
        onExit: () => clearTimeout(this.detectTimer),
        onFinish: (exitError) => this.finish(exitError),
      },
    );
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  /** The child's pid (also its process group id) once spawned. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The framing in use in both directions; `undefined` while `auto` has not decided. */
  get framing(): Framing | undefined {
    return this.negotiation.framing;
  }

  /** How the child exited, once it has. */
  get exitStatus(): ChildExitStatus | undefined {
    return this.child.exitStatus;
  }

  /** What went wrong with the child (see `StdioProcess.failure`); read by a failed handshake. */
  startFailure(): string | undefined {
    return this.child.failure;
  }

  /** Spawns the child; resolves once it runs, rejects (code UPSTREAM_START_FAILED) if it cannot start. */
  start(): Promise<void> {
    return this.child.start();
  }

  /** Writes one message, framed; waits for the pipe to drain when it is full. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.child.isOpen || this.closing !== undefined) throw this.notConnected();
    const decision = this.negotiation.send(message);
    switch (decision.kind) {
      case 'write':
        return this.child.write(decision.bytes);
      case 'probe':
        this.armDetectWindow();
        return this.child.write(decision.bytes);
      case 'hold':
        return new Promise<void>((resolve, reject) => this.negotiation.hold({ message, resolve, reject }));
      case 'full':
        throw this.error('too many messages waiting for framing detection');
      default: {
        const unreachable: never = decision;
        throw new TypeError(`unknown send decision ${(unreachable as { kind: string }).kind}`);
      }
    }
  }

  /**
   * Ends stdin, SIGTERMs the process group, SIGKILLs it after `killGraceMs`; resolves once the
   * child has exited. Idempotent; `onclose` fires once.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    if (!this.child.terminate()) return; // never ran: finished on the spot
    await this.finished;
  }

  private finish(exitError: Error | undefined): void {
    clearTimeout(this.detectTimer);
    for (const held of this.negotiation.abandon()) held.reject(this.notConnected());
    if (exitError !== undefined) this.report(exitError);
    this.resolveFinished();
    try {
      this.onclose?.();
    } catch (error) {
      this.log.debug({ err: error }, 'onclose handler threw');
    }
  }

  private handleChunk(chunk: Buffer): void {
    for (const event of this.decoder.push(chunk)) {
      this.handleEvent(event);
      // A handler or a fatal event may have closed the transport.
      if (this.child.isFinished || this.decoder.failed) return;
    }
    const { resend, release } = this.negotiation.endOfChunk();
    if (resend !== undefined) this.resendProbe(resend, 'child answered with Content-Length framing');
    for (const released of release) {
      if ('error' in released) released.held.reject(released.error);
      else this.child.write(released.bytes).then(released.held.resolve, released.held.reject);
    }
  }

  private handleEvent(event: DecodeEvent): void {
    switch (event.kind) {
      case 'message':
        this.deliver(event.value);
        return;
      case 'detected':
        this.negotiation.detected(event.framing);
        clearTimeout(this.detectTimer);
        this.log.debug({ framing: event.framing }, 'stdio framing detected');
        return;
      case 'noise':
        this.log.debug(
          { bytes: event.bytes, preview: this.redact(event.preview, Buffer.byteLength(event.preview) < event.bytes) },
          'skipped a non-JSON line on stdout',
        );
        return;
      case 'invalid':
        this.report(this.error(`skipped a malformed JSON message (${event.bytes} bytes)`));
        return;
      case 'fatal':
        // Over the cap: the error every open request fails with, as on the HTTP wires (dispatch-hop.ts).
        this.report(event.reason === 'too-large' ? messageTooLarge(this.serverName, this.maxMessageBytes) : this.error(`${event.message}; closing the connection`));
        void this.close();
        return;
      default: {
        const unreachable: never = event;
        throw new TypeError(`unknown decode event ${(unreachable as { kind: string }).kind}`);
      }
    }
  }

  private deliver(value: unknown): void {
    // The JSON-RPC envelope only: params and results are the upstream's and the client's to judge.
    if (!isRpcMessage(value)) {
      this.report(this.error('skipped a message that is not JSON-RPC'));
      return;
    }
    const message = value;
    if (this.negotiation.receive(message) === 'drop') {
      this.log.debug('dropped a second answer to the re-sent first message');
      return;
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.report(error instanceof Error ? error : new Error('onmessage handler threw'));
    }
  }

  private armDetectWindow(): void {
    this.detectTimer = setTimeout(() => {
      if (!this.child.isOpen || this.closing !== undefined) return;
      const resend = this.negotiation.windowElapsed();
      if (resend !== undefined) this.resendProbe(resend, 'no output within the detection window');
    }, this.detectWindowMs);
    this.detectTimer.unref();
  }

  private resendProbe(bytes: Buffer, reason: string): void {
    this.log.debug({ reason }, 're-sending the first message with Content-Length framing');
    this.child.write(bytes).catch((error: unknown) => {
      this.log.debug({ code: codeOf(error) }, 're-send failed');
    });
  }

  private report(error: Error): void {
    try {
      this.onerror?.(error);
    } catch {
      // an error handler that throws must not take the read loop down
    }
  }

  private error(what: string): GatewayError {
    return stdioServerError(this.serverName, what);
  }

  private notConnected(): GatewayError {
    return this.error('not connected');
  }
}
