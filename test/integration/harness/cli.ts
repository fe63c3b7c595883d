/** The `portcullis` executable as a child process: `node dist/src/main.js …`, argv only, no shell. */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_JS, ROOT } from './paths.js';
import { waitForExit } from './processes.js';
import { Changes, type Cleanup } from './wait.js';

export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with capture group 1 of the first stdout line matching `pattern`; rejects if the CLI exits first. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit status (hang guard `timeoutMs`, then SIGKILL by pid). */
  exited(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns the CLI with a minimal environment plus `env`; SIGKILLed by pid in `cleanup` if still running. */
/** The CLI's Ready line on a loopback listener at `/mcp`; group 1 is the MCP URL. */
export const READY_LINE = /^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;

export function spawnCli(cleanup: Cleanup, args: readonly string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  const child = spawn(process.execPath, [CLI_JS, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    shell: false,
  });
  let stdout = '';
  let stderr = '';
  /** Set once the process exited and its output was read to the end. */
  let closed = false;
  const output = new Changes();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    output.changed();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.once('close', () => {
    closed = true;
    output.changed();
  });
  cleanup.add(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const findLine = (pattern: RegExp): string | undefined => {
    for (const line of stdout.split('\n')) {
      const found = pattern.exec(line);
      if (found !== null) return found[1] ?? found[0];
    }
    if (closed) throw new Error(`the CLI exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}`);
    return undefined;
  };
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForLine: (pattern, timeoutMs = 20_000) => output.until(() => findLine(pattern), `stdout line ${pattern}`, timeoutMs),
    exited: (timeoutMs = 20_000) => waitForExit(child, timeoutMs),
  };
}
