/**
 * `npm start`: the whole demo in one command. Starts the clock server (Streamable HTTP, on a free
 * loopback port), then the gateway on its embedded default config fronting it and the notes
 * server (stdio, spawned by the gateway). Ctrl-C (SIGINT) or SIGTERM takes all of it down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../src/config/load.js';
import { ConfigError } from '../src/errors.js';
import { gatewayLogger, runGateway } from '../src/cli.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

function startClock(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [here('./servers/clock-http.js'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the clock demo server did not start within 15 s'));
    }, 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the clock demo server exited early (code ${code})`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^DEMO_READY (\S+)$/.exec(line);
      if (match === null) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ child, url: match[1]! });
    });
  });
}

/** The embedded default: both demo servers, the safe defaults for everything else. */
export function demoConfig(clockUrl: string, port: number) {
  return {
    name: 'portcullis-demo',
    instructions: 'Portcullis demo gateway: a notes server (stdio) and a clock server (Streamable HTTP).',
    listen: { host: '127.0.0.1', port, path: '/mcp' },
    servers: {
      notes: { transport: 'stdio', command: process.execPath, args: [here('./servers/notes-stdio.js')] },
      // The demo clock listens on loopback, which the egress guard blocks unless opened per server.
      clock: { transport: 'streamableHttp', url: clockUrl, allowPrivateNetwork: true },
    },
  };
}

async function start(): Promise<number> {
  const port = Number(process.env.PORT ?? 8787);
  const clock = await startClock();
  const stopClock = () => {
    if (clock.child.exitCode === null) clock.child.kill('SIGTERM');
  };
  process.once('exit', stopClock);
  try {
    const config = parseConfig(demoConfig(clock.url, port));
    const logger = gatewayLogger(config, process.env);
    return await runGateway(config, logger);
  } catch (error) {
    process.stderr.write(`portcullis demo: ${error instanceof ConfigError ? error.message : String(error)}\n`);
    return 1;
  } finally {
    stopClock();
  }
}

start().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`portcullis demo: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
