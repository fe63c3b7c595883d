/**
 * The stdio upstream transport: one supervised child process speaking MCP JSON-RPC on its
 * stdin/stdout, behind the SDK `Transport` interface (a dumb pipe; protocol logic stays in the
 * SDK `Client` above it).
 *
 * Supervision rules (DESIGN.md §5):
 * - argv only, never a shell (no injection through a command or argument);
 * - the child leads its own process group, and the whole group is signalled, so helpers it spawns
 *   (`npx` → `node`, `uvx` → `python`, a `sleep`) die with it; whatever is left of the group when
 *   the leader exits is killed at once (the group id stays safe to signal only while members keep
 *   it alive);
 * - stderr goes to the debug log only, line by line, bounded and redacted;
 * - errors never name the command, its arguments or environment values.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import {
  parseJSONRPCMessage,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
} from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { Redactor } from '../observability/logger.js';
import { isInheritedEnvName } from './child-env.js';
import {
  createAutoDecoder,
  createContentLengthDecoder,
  createLineSplitter,
  createNdjsonDecoder,
  DEFAULT_MAX_MESSAGE_BYTES,
  encodeContentLengthProbe,
  encodeMessage,
  type DecodeEvent,
  type Framing,
  type FramingMode,
  type LineSplitter,
  type MessageDecoder,
} from './framing.js';

export interface StdioUpstreamTransportOptions {
  /** The server's config key: the only identifying detail errors and logs carry. */
  serverName: string;
  command: string;
  args: readonly string[];
  /** The child's whole environment (build it with `buildChildEnv`). */
  env: Readonly<Record<string, string>>;
  cwd?: string;
  framing: FramingMode;
  logger: Logger;
  /** Time between SIGTERM and SIGKILL to the process group on close; default 2000 ms. */
  killGraceMs?: number;
  /** Largest message accepted from the child; default 16 MiB. Larger closes the transport. */
  maxMessageBytes?: number;
  /** `auto` only: silence after the first message before it is re-sent Content-Length-framed; default 1 s. */
  detectWindowMs?: number;
  /**
   * Masks secrets in stderr lines and stdout noise before they are logged. The values of `env`
   * entries that are not inherited names (i.e. the entry's explicit env) are always masked.
   */
  redactor?: Redactor;
}

export interface ChildExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const DEFAULT_KILL_GRACE_MS = 2000;
const DEFAULT_DETECT_WINDOW_MS = 1000;
/**
 * After the child exits, how long its stdout/stderr may take to deliver what is still in the
 * pipes (a process that escaped the group may hold them open forever).
 */
const OUTPUT_DRAIN_MS = 1000;
/** `auto`: messages sent after the first one while the framing is unknown wait, at most this many. */
const MAX_HELD_MESSAGES = 256;

/** Process groups of children that are running, for `killAllStdioChildren`. */
const liveGroups = new Map<StdioUpstreamTransport, number>();

/**
 * SIGKILLs the process group of every stdio child still running, synchronously. For
 * `process.on('exit')` and fatal-error paths, where `close()` cannot be awaited: children are
 * spawned detached (their own group), so nothing else would stop them outliving the gateway.
 * Returns how many groups were signalled.
 */
export function killAllStdioChildren(): number {
  for (const pid of liveGroups.values()) signalGroup(pid, 'SIGKILL');
  return liveGroups.size;
}

interface Probe {
  readonly message: JSONRPCMessage;
  readonly id: string | number | undefined;
  resent: boolean;
  answered: boolean;
}

interface HeldMessage {
  readonly message: JSONRPCMessage;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * A supervised stdio child behind the SDK `Transport` interface.
 *
 * Framing `auto` (the default in config): a child cannot be asked which framing it speaks, and
 * the client must speak first (`initialize`). So:
 * 1. Output from the child decides: its first non-whitespace bytes are a `Content-…:` header
 *    (contentLength) or anything else (ndjson; a banner line is skipped). The decision holds for
 *    the connection's life, in both directions.
 * 2. The first outbound message goes out as ndjson (what the MCP stdio binding specifies and
 *    nearly every server speaks). Later messages wait until the framing is known.
 * 3. If the child answers in Content-Length framing without having answered the first message,
 *    that message is re-sent once, Content-Length-framed.
 * 4. If the child writes nothing for `detectWindowMs` after the first message (a Content-Length
 *    server silently discarding ndjson), the first message is re-sent once, Content-Length-framed,
 *    in a shape an ndjson child skips as unparseable lines (see `encodeContentLengthProbe`), so a
 *    merely slow ndjson server does not see it twice. Whichever framing the child then answers in
 *    wins; a second answer to the first message (a child that understood both) is dropped.
 * A Content-Length server that errors out on the leading ndjson line needs `framing:
 * 'contentLength'`; one that parses stdin as a stream of JSON values rather than lines needs
 * `framing: 'ndjson'`.
 */
export class StdioUpstreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  private readonly options: StdioUpstreamTransportOptions;
  private readonly log: Logger;
  private readonly killGraceMs: number;
  private readonly detectWindowMs: number;
  private readonly redact: (text: string) => string;
  private readonly decoder: MessageDecoder;
  private readonly stderrLines: LineSplitter = createLineSplitter();

  private child: ChildProcess | undefined;
  private state: 'new' | 'starting' | 'open' | 'closed' = 'new';
  private exitStatusValue: ChildExitStatus | undefined;
  private exitError: Error | undefined;
  /** stdout and stderr: read to their end before `onclose`, so the child's last words count. */
  private openOutputs = 2;
  private closing: Promise<void> | undefined;
  private done = false;
  private readonly finished: Promise<void>;
  private resolveFinished!: () => void;

  private outFraming: Framing | undefined;
  private probe: Probe | undefined;
  private resendProbeAfterChunk = false;
  private held: HeldMessage[] = [];
  private drain: Promise<void> | undefined;
  private detectTimer: NodeJS.Timeout | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private drainTimer: NodeJS.Timeout | undefined;

  constructor(options: StdioUpstreamTransportOptions) {
    validateOptions(options);
    this.options = options;
    this.log = options.logger.child({ server: options.serverName });
    this.killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.detectWindowMs = options.detectWindowMs ?? DEFAULT_DETECT_WINDOW_MS;
    const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.redact = redactorFor(options);
    this.outFraming = options.framing === 'auto' ? undefined : options.framing;
    this.decoder =
      options.framing === 'ndjson'
        ? createNdjsonDecoder({ maxMessageBytes })
        : options.framing === 'contentLength'
          ? createContentLengthDecoder({ maxMessageBytes })
          : createAutoDecoder({ maxMessageBytes });
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  /** The child's pid (also its process group id) once spawned. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The framing in use in both directions; `undefined` while `auto` has not decided. */
  get framing(): Framing | undefined {
    return this.outFraming;
  }

  /** How the child exited, once it has. */
  get exitStatus(): ChildExitStatus | undefined {
    return this.exitStatusValue;
  }

  /** Spawns the child; resolves once it runs, rejects (code UPSTREAM_START_FAILED) if it cannot start. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`stdio server "${this.options.serverName}": transport already started`);
    this.state = 'starting';
    const { command, args, env, cwd } = this.options;
    let child: ChildProcess;
    try {
      child = spawn(command, [...args], {
        cwd,
        env: { ...env },
        shell: false,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      this.state = 'closed';
      throw this.startError(error);
    }
    this.child = child;
    if (child.pid !== undefined) liveGroups.set(this, child.pid);
    this.wire(child);
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => {
        if (this.state === 'starting') this.state = 'open';
        this.log.debug({ pid: child.pid }, 'stdio server spawned');
        resolve();
      });
      child.once('error', (error) => {
        if (child.pid !== undefined) return; // a running child's errors are handled in wire()
        this.state = 'closed';
        reject(this.startError(error));
      });
    });
  }

  /** Writes one message, framed; waits for the pipe to drain when it is full. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.state !== 'open' || this.closing !== undefined) throw this.notConnected();
    if (this.outFraming !== undefined) return this.write(encodeMessage(message, this.outFraming));
    if (this.probe === undefined) {
      this.probe = { message, id: idOf(message), resent: false, answered: false };
      const bytes = encodeMessage(message, 'ndjson');
      this.armDetectWindow();
      return this.write(bytes);
    }
    if (this.held.length >= MAX_HELD_MESSAGES) {
      throw new GatewayError(
        'UPSTREAM_UNAVAILABLE',
        `stdio server "${this.options.serverName}": too many messages waiting for framing detection`,
        { server: this.options.serverName },
      );
    }
    return new Promise<void>((resolve, reject) => this.held.push({ message, resolve, reject }));
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
    const child = this.child;
    if (child?.pid === undefined) {
      this.finish();
      return;
    }
    if (this.exitStatusValue === undefined) {
      try {
        child.stdin?.end();
      } catch {
        // already broken: the signals below still apply
      }
      signalGroup(child.pid, 'SIGTERM');
      this.killTimer = setTimeout(() => {
        if (this.exitStatusValue === undefined && child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      }, this.killGraceMs);
    }
    await this.finished;
  }

  private wire(child: ChildProcess): void {
    child.on('error', (error) => {
      if (child.pid === undefined) return; // failed spawn: start() rejects
      this.report(this.error(`process error (${codeOf(error)})`));
    });
    child.once('exit', (code, signal) => this.handleExit(code, signal));
    child.stdout?.on('data', (chunk: Buffer) => this.handleChunk(chunk));
    for (const pipe of [child.stdout, child.stderr]) {
      pipe?.once('close', () => {
        this.openOutputs--;
        if (this.openOutputs === 0 && this.exitStatusValue !== undefined) this.finish();
      });
    }
    child.stdout?.on('error', (error) => this.log.debug({ code: codeOf(error) }, 'stdout error'));
    child.stderr?.on('data', (chunk: Buffer) => this.logStderr(this.stderrLines.push(chunk)));
    child.stderr?.on('error', (error) => this.log.debug({ code: codeOf(error) }, 'stderr error'));
    // EPIPE once the child is gone: its exit is what gets reported.
    child.stdin?.on('error', (error) => this.log.debug({ code: codeOf(error) }, 'stdin error'));
  }

  private handleExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitStatusValue = { code, signal };
    const pid = this.child?.pid;
    // Leftovers of the group (grandchildren) go now, while they still hold the group id.
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
    liveGroups.delete(this);
    clearTimeout(this.killTimer);
    clearTimeout(this.detectTimer);
    this.log.debug({ code, signal }, 'stdio server exited');
    if (this.closing === undefined) {
      this.exitError = this.error(`process exited unexpectedly (${describeExit(code, signal)})`);
    }
    if (this.openOutputs === 0) this.finish();
    else this.drainTimer = setTimeout(() => this.finish(), OUTPUT_DRAIN_MS);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.state = 'closed';
    clearTimeout(this.drainTimer);
    clearTimeout(this.detectTimer);
    liveGroups.delete(this);
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.child?.stdin?.destroy();
    this.logStderr(this.stderrLines.end());
    for (const held of this.held.splice(0)) held.reject(this.notConnected());
    if (this.exitError !== undefined) this.report(this.exitError);
    this.resolveFinished();
    try {
      this.onclose?.();
    } catch (error) {
      this.log.debug({ err: error }, 'onclose handler threw');
    }
  }

  private handleChunk(chunk: Buffer): void {
    if (this.done) return;
    for (const event of this.decoder.push(chunk)) {
      this.handleEvent(event);
      // A handler or a fatal event may have closed the transport.
      if (this.isDone() || this.decoder.failed) return;
    }
    if (this.resendProbeAfterChunk) {
      this.resendProbeAfterChunk = false;
      if (this.probe !== undefined && !this.probe.answered) {
        this.resendProbe('child answered with Content-Length framing');
      }
    }
    if (this.outFraming !== undefined && this.held.length > 0) this.flushHeld(this.outFraming);
  }

  private isDone(): boolean {
    return this.done;
  }

  private handleEvent(event: DecodeEvent): void {
    switch (event.kind) {
      case 'message':
        this.deliver(event.value);
        return;
      case 'detected':
        this.outFraming = event.framing;
        clearTimeout(this.detectTimer);
        this.resendProbeAfterChunk =
          event.framing === 'contentLength' && this.probe !== undefined && !this.probe.resent;
        this.log.debug({ framing: event.framing }, 'stdio framing detected');
        return;
      case 'noise':
        this.log.debug(
          { bytes: event.bytes, preview: this.redact(event.preview) },
          'skipped a non-JSON line on stdout',
        );
        return;
      case 'invalid':
        this.report(this.error(`skipped a malformed JSON message (${event.bytes} bytes)`));
        return;
      case 'fatal':
        this.report(this.error(`${event.message}; closing the connection`));
        void this.close();
        return;
      default: {
        const unreachable: never = event;
        throw new TypeError(`unknown decode event ${(unreachable as { kind: string }).kind}`);
      }
    }
  }

  private deliver(value: unknown): void {
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(value);
    } catch {
      this.report(this.error('skipped a message that is not JSON-RPC'));
      return;
    }
    const probe = this.probe;
    if (probe !== undefined && probe.id !== undefined && isResponse(message) && message.id === probe.id) {
      if (probe.answered && probe.resent) {
        this.log.debug('dropped a second answer to the re-sent first message');
        return;
      }
      probe.answered = true;
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.report(error instanceof Error ? error : new Error('onmessage handler threw'));
    }
  }

  private armDetectWindow(): void {
    this.detectTimer = setTimeout(() => {
      if (this.outFraming === undefined && this.state === 'open' && this.closing === undefined) {
        this.resendProbe('no output within the detection window');
      }
    }, this.detectWindowMs);
    this.detectTimer.unref();
  }

  private resendProbe(reason: string): void {
    const probe = this.probe;
    if (probe === undefined || probe.resent) return;
    probe.resent = true;
    this.log.debug({ reason }, 're-sending the first message with Content-Length framing');
    this.write(encodeContentLengthProbe(probe.message)).catch((error: unknown) => {
      this.log.debug({ code: codeOf(error) }, 're-send failed');
    });
  }

  private flushHeld(framing: Framing): void {
    for (const held of this.held.splice(0)) {
      let bytes: Buffer;
      try {
        bytes = encodeMessage(held.message, framing);
      } catch (error) {
        held.reject(error instanceof Error ? error : new TypeError('message is not representable as JSON'));
        continue;
      }
      this.write(bytes).then(held.resolve, held.reject);
    }
  }

  private async write(bytes: Buffer): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin == null || !stdin.writable || this.state === 'closed') throw this.notConnected();
    if (stdin.write(bytes)) return;
    await this.waitForDrain(stdin);
  }

  /** One shared wait per full pipe, so many blocked senders add one listener pair, not many. */
  private waitForDrain(stdin: Writable): Promise<void> {
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

  private logStderr(lines: string[]): void {
    for (const line of lines) this.log.debug({ stderr: this.redact(line) }, 'stdio server stderr');
  }

  private report(error: Error): void {
    try {
      this.onerror?.(error);
    } catch {
      // an error handler that throws must not take the read loop down
    }
  }

  private error(what: string): GatewayError {
    const server = this.options.serverName;
    return new GatewayError('UPSTREAM_UNAVAILABLE', `stdio server "${server}": ${what}`, { server });
  }

  private notConnected(): GatewayError {
    return this.error('not connected');
  }

  /** No `cause`: Node's spawn errors quote the command, its arguments and env values. */
  private startError(error: unknown): GatewayError {
    const server = this.options.serverName;
    return new GatewayError(
      'UPSTREAM_START_FAILED',
      `stdio server "${server}": command could not be started (${codeOf(error)})`,
      { server },
    );
  }
}

/** Signals a whole process group (the child leads its own); a gone group is not an error. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // Windows has no process groups here: only the child itself can be signalled.
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
  } catch {
    // ESRCH: nothing left to signal
  }
}

function validateOptions(options: StdioUpstreamTransportOptions): void {
  if (typeof options.serverName !== 'string' || options.serverName === '') {
    throw new TypeError('serverName must be a non-empty string');
  }
  const where = `stdio server "${options.serverName}"`;
  if (typeof options.command !== 'string' || options.command === '') {
    throw new TypeError(`${where}: command must be a non-empty string`);
  }
  if (!Array.isArray(options.args) || !options.args.every((arg) => typeof arg === 'string')) {
    throw new TypeError(`${where}: args must be an array of strings`);
  }
  if (!['auto', 'ndjson', 'contentLength'].includes(options.framing)) throw new TypeError(`${where}: unknown framing`);
  for (const name of ['killGraceMs', 'maxMessageBytes', 'detectWindowMs'] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) {
      throw new TypeError(`${where}: ${name} must be a positive integer`);
    }
  }
}

function redactorFor(options: StdioUpstreamTransportOptions): (text: string) => string {
  const explicitValues = Object.entries(options.env)
    .filter(([name]) => !isInheritedEnvName(name))
    .map(([, value]) => value);
  const own = new Redactor(explicitValues);
  const extra = options.redactor;
  return extra === undefined ? (text) => own.redact(text) : (text) => extra.redact(own.redact(text));
}

function idOf(message: JSONRPCMessage): string | number | undefined {
  return 'id' in message && (typeof message.id === 'string' || typeof message.id === 'number') ? message.id : undefined;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: string | number } {
  return 'id' in message && message.id !== undefined && !('method' in message);
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'unknown error';
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return code !== null ? `exit code ${code}` : `signal ${signal ?? 'unknown'}`;
}
