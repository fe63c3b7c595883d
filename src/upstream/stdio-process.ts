/**
 * One supervised stdio child process: spawned, watched and stopped. A byte pipe only; framing and
 * the SDK `Transport` interface live in `stdio-transport.ts`.
 *
 * Supervision rules (docs/decisions.md, "stdio children"):
 * - argv only, never a shell (no injection through a command or argument);
 * - the child leads its own process group, and the whole group is signalled (`process-group.ts`);
 *   whatever is left of the group when the leader exits is killed at once (the group id stays
 *   safe to signal only while members keep it alive);
 * - stderr goes to the debug log only, line by line, bounded and redacted (`stdio-stderr.ts`);
 * - errors never name the command, its arguments or environment values.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { ChildCensus } from './child-census.js';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { signalGroup, trackGroup, untrackGroup } from './process-group.js';
import { exitedAtStart, spawnFailure } from './start-failure.js';
import { StderrLog } from './stdio-stderr.js';
import { StdinWriter } from './stdin-writer.js';

export interface ChildExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StdioProcessOptions {
  /** The server's config key: the only identifying detail errors and logs carry. */
  serverName: string;
  command: string;
  args: readonly string[];
  /** The child's whole environment. */
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** Time between SIGTERM and SIGKILL to the process group on `terminate()`. */
  killGraceMs: number;
  /** Already carries the server name; gets debug lines only. */
  log: Logger;
  /** Masks secrets in stderr lines before they are logged; `cut` says the text was truncated at its end (a secret may be half there). */
  redact: (text: string, cut?: boolean) => string;
  /** Counts this child while it runs (the gateway's metrics); absent: not counted. */
  census?: ChildCensus;
}

/** What the owner of a process hears; called synchronously, from the child's events. */
export interface StdioProcessHandlers {
  /** A chunk of the child's stdout (not called once the process has finished). */
  onStdout(chunk: Buffer): void;
  /** A fault of the running process that does not end it by itself. */
  onError(error: Error): void;
  /** The child has exited; its output may still be draining. */
  onExit(): void;
  /**
   * Once: the child exited and its output was read to the end (or the drain gave up), or it was
   * terminated without ever running. `exitError` is set when the exit was not asked for.
   */
  onFinish(exitError: Error | undefined): void;
}

/**
 * After the child exits, how long its stdout/stderr may take to deliver what is still in the
 * pipes (a process that escaped the group may hold them open forever).
 */
const OUTPUT_DRAIN_MS = 1000;

/** An error about stdio server `server` that names nothing but the server. */
export function stdioServerError(server: string, what: string): GatewayError {
  return new GatewayError('UPSTREAM_UNAVAILABLE', `stdio server "${server}": ${what}`, { server });
}

/** A Node error's `code` (`ENOENT`, `EPIPE`), safe to log: never its message, which may quote a command. */
export function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'unknown error';
}

/** A supervised child: `start()`, `write()` with back-pressure, `terminate()` its process group. */
export class StdioProcess {
  private readonly options: StdioProcessOptions;
  private readonly handlers: StdioProcessHandlers;
  private readonly stderr: StderrLog;
  private spawnErrorCode: string | undefined;

  private child: ChildProcess | undefined;
  private state: 'new' | 'starting' | 'open' | 'closed' = 'new';
  private exitStatusValue: ChildExitStatus | undefined;
  private exitError: Error | undefined;
  private terminating = false;
  /** stdout and stderr: read to their end before `onFinish`, so the child's last words count. */
  private openOutputs = 2;
  private finished = false;
  private stdin: StdinWriter | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private drainTimer: NodeJS.Timeout | undefined;

  constructor(options: StdioProcessOptions, handlers: StdioProcessHandlers) {
    this.options = options;
    this.handlers = handlers;
    this.stderr = new StderrLog(options.log, options.redact);
  }

  /** The child's pid (also its process group id) once spawned. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the child exited, once it has. */
  get exitStatus(): ChildExitStatus | undefined {
    return this.exitStatusValue;
  }

  /**
   * What went wrong, when the child could not be spawned or exited without being asked to: the
   * error code, or the exit status with the last stderr lines (redacted). Undefined otherwise.
   */
  get failure(): string | undefined {
    if (this.spawnErrorCode !== undefined) return spawnFailure(this.options.serverName, this.spawnErrorCode);
    if (this.exitStatusValue === undefined || this.terminating) return undefined;
    return exitedAtStart(this.exitStatusValue, this.stderr.tail);
  }

  /** True from the spawn until the process has finished. */
  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** True once `onFinish` has been called. */
  get isFinished(): boolean {
    return this.finished;
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
    if (child.pid !== undefined) this.track(child.pid);
    this.wire(child);
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => {
        if (this.state === 'starting') this.state = 'open';
        this.options.log.debug({ pid: child.pid }, 'stdio server spawned');
        resolve();
      });
      child.once('error', (error) => {
        if (child.pid !== undefined) return; // a running child's errors are handled in wire()
        this.state = 'closed';
        reject(this.startError(error));
      });
    });
  }

  /**
   * Writes bytes to the child's stdin; waits for the pipe to drain when it is full. Messages
   * written in the same turn of the event loop leave in one `writev` (`stdin-writer.ts`).
   */
  async write(bytes: Buffer): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin == null || !stdin.writable || this.state === 'closed') throw this.notConnected();
    this.stdin ??= new StdinWriter(stdin, () => this.notConnected());
    await this.stdin.write(bytes);
  }

  /**
   * Ends stdin, SIGTERMs the process group, SIGKILLs it after `killGraceMs`. Returns false when
   * there was never a child (`onFinish` has then been called already): nothing to wait for.
   */
  terminate(): boolean {
    this.terminating = true;
    const child = this.child;
    if (child?.pid === undefined) {
      this.finish();
      return false;
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
      }, this.options.killGraceMs);
    }
    return true;
  }

  private wire(child: ChildProcess): void {
    const { log } = this.options;
    child.on('error', (error) => {
      if (child.pid === undefined) return; // failed spawn: start() rejects
      this.handlers.onError(this.error(`process error (${codeOf(error)})`));
    });
    child.once('exit', (code, signal) => this.handleExit(code, signal));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (!this.finished) this.handlers.onStdout(chunk);
    });
    for (const pipe of [child.stdout, child.stderr]) {
      pipe?.once('close', () => {
        this.openOutputs--;
        if (this.openOutputs === 0 && this.exitStatusValue !== undefined) this.finish();
      });
    }
    child.stdout?.on('error', (error) => log.debug({ code: codeOf(error) }, 'stdout error'));
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    child.stderr?.on('error', (error) => log.debug({ code: codeOf(error) }, 'stderr error'));
    // EPIPE once the child is gone: its exit is what gets reported.
    child.stdin?.on('error', (error) => log.debug({ code: codeOf(error) }, 'stdin error'));
  }

  private track(pid: number): void {
    trackGroup(this, pid);
    this.options.census?.spawned(this.options.serverName);
  }

  /** Once, whichever of exit and finish comes first. */
  private untrack(): void {
    if (!untrackGroup(this)) return;
    this.options.census?.gone(this.options.serverName);
  }

  private handleExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitStatusValue = { code, signal };
    const pid = this.child?.pid;
    // Leftovers of the group (grandchildren) go now, while they still hold the group id.
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
    this.untrack();
    clearTimeout(this.killTimer);
    this.handlers.onExit();
    this.options.log.debug({ code, signal }, 'stdio server exited');
    if (!this.terminating) {
      this.exitError = this.error(`process exited unexpectedly (${describeExit(code, signal)})`);
    }
    if (this.openOutputs === 0) this.finish();
    else this.drainTimer = setTimeout(() => this.finish(), OUTPUT_DRAIN_MS);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.state = 'closed';
    clearTimeout(this.drainTimer);
    this.untrack();
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.child?.stdin?.destroy();
    this.stderr.end();
    this.handlers.onFinish(this.exitError);
  }

  private error(what: string): GatewayError {
    return stdioServerError(this.options.serverName, what);
  }

  private notConnected(): GatewayError {
    return this.error('not connected');
  }

  /** No `cause`: Node's spawn errors quote the command, its arguments and env values. */
  private startError(error: unknown): GatewayError {
    const server = this.options.serverName;
    this.spawnErrorCode = codeOf(error);
    const message = `stdio server "${server}": ${spawnFailure(server, this.spawnErrorCode)}`;
    return new GatewayError('UPSTREAM_START_FAILED', message, { server });
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return code !== null ? `exit code ${code}` : `signal ${signal ?? 'unknown'}`;
}
