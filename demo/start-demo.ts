/**
 * `npm start`: the whole demo in one command. Starts the clock server (Streamable HTTP, on a free
 * loopback port), then the gateway on its embedded default config fronting it and the notes
 * server (stdio, spawned by the gateway).
 *
 * SIGTERM (what Docker, systemd and CI send), SIGINT (Ctrl-C) and SIGHUP (the terminal went away)
 * take all of it down, whenever they arrive: while the clock is starting, while the gateway is
 * starting, or once it serves. The clock is stopped and waited for on every exit path, and it
 * also stops by itself when this process's end of its stdin pipe closes (even on SIGKILL).
 * `package.json` `exec`s this file, so the signal npm forwards reaches it, not a shell.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../src/config/load.js';
import { ConfigError } from '../src/errors.js';
import { gatewayLogger, runGateway } from '../src/cli.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
/** How long the clock gets to exit after SIGTERM before it is killed. */
const CLOCK_STOP_MS = 5_000;

function startClock(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the clock demo server did not start within 15 s')), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the clock demo server exited early (code ${code})`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^DEMO_READY (\S+)$/.exec(line);
      if (match === null) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve(match[1]!);
    });
  });
}

/** SIGTERM, then SIGKILL if it has not exited within {@link CLOCK_STOP_MS}; resolves once it is gone. */
async function stopClock(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), CLOCK_STOP_MS);
  await exited;
  clearTimeout(timer);
}

/** The embedded default: both demo servers, the safe defaults for everything else. */
export function demoConfig(clockUrl: string, port: number) {
  return {
    name: 'portcullis-demo',
    instructions: 'Portcullis demo gateway: a notes server (stdio) and a clock server (Streamable HTTP).',
    persona: 'You are the Portcullis demo assistant: brief, exact, and clear about which server a tool belongs to.',
    listen: { host: '127.0.0.1', port, path: '/mcp' },
    servers: {
      // One notes child for every session: a note added in one client run is there in the next.
      notes: { transport: 'stdio', command: process.execPath, args: [here('./servers/notes-stdio.js')], isolation: 'shared' },
      // The demo clock listens on loopback, which the egress guard blocks unless opened per server.
      clock: { transport: 'streamableHttp', url: clockUrl, allowPrivateNetwork: true },
    },
    // One example plugin (a server and an agent): see it at http://127.0.0.1:8787/mcp/customizations;
    // its agent is an MCP endpoint of its own, narrowed to the dice tool, at
    // http://127.0.0.1:8787/mcp/agents/dice-kit:game-master.
    plugins: [here('../../demo/plugins/dice-kit')],
  };
}

async function start(): Promise<number> {
  const port = Number(process.env.PORT ?? 8787);
  const clock = spawn(process.execPath, [here('./servers/clock-http.js'), '--port', '0', '--exit-with-stdin'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // Whatever ends this process, the clock goes with it (a synchronous kill is all 'exit' allows).
  process.once('exit', () => {
    if (clock.exitCode === null && clock.signalCode === null) clock.kill('SIGTERM');
  });
  // Until the gateway takes the signals over, one of them stops the demo where it stands.
  let stopRequested = false;
  const early = () => {
    stopRequested = true;
    void stopClock(clock); // ends the wait for its Ready line below
  };
  for (const signal of STOP_SIGNALS) process.on(signal, early);
  try {
    const clockUrl = await startClock(clock);
    if (stopRequested) return 0;
    const config = parseConfig(demoConfig(clockUrl, port));
    const logger = gatewayLogger(config, process.env);
    for (const signal of STOP_SIGNALS) process.off(signal, early);
    // runGateway installs its handlers before it yields, so no signal falls between the two.
    return await runGateway(config, logger, STOP_SIGNALS);
  } catch (error) {
    if (stopRequested) return 0;
    process.stderr.write(`portcullis demo: ${error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, early);
    await stopClock(clock);
  }
}

start().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`portcullis demo: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
