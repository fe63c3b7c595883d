/**
 * The `portcullis` executable over marked stdio fixtures, from a config file a test rewrites and
 * reloads (`portcullis reload`, SIGHUP, the file watch): the reload suites' one way to start it.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { READY_LINE, spawnCli, type CliProcess } from './cli.js';
import { newMarker } from './paths.js';
import { killPids, processesWithMarker } from './processes.js';
import { stdioServer } from './upstreams.js';
import { waitUntil, type Cleanup } from './wait.js';

export interface ReloadableGateway {
  cli: CliProcess;
  url: string;
  path: string;
  /** Env markers of the fixtures a test may name (`local`, `other`); their processes are killed at cleanup. */
  markers: { local: string; other: string };
  write(servers: (markers: ReloadableGateway['markers']) => Record<string, unknown>, extra?: Record<string, unknown>): void;
}

let count = 0;

/**
 * A gateway in `dir/gw-<n>` over `servers` (default: the marked fixtures `local` and `other`),
 * `extra` merged into every file written, started with info logs on stderr.
 */
export async function startReloadable(
  cleanup: Cleanup,
  dir: string,
  extra: Record<string, unknown> = {},
  servers: (markers: ReloadableGateway['markers']) => Record<string, unknown> = (m) => ({ local: stdioServer(m.local), other: stdioServer(m.other) }),
): Promise<ReloadableGateway> {
  const markers = { local: newMarker(), other: newMarker() };
  cleanup.add(() => killPids([...processesWithMarker(markers.local), ...processesWithMarker(markers.other)]));
  const sub = join(dir, `gw-${process.pid}-${++count}`);
  const path = join(sub, 'gateway.json');
  const write: ReloadableGateway['write'] = (next, more = extra) => {
    writeFileSync(path, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, ...more, servers: next(markers) }));
  };
  rmSync(sub, { recursive: true, force: true });
  mkdirSync(sub, { recursive: true });
  write(servers);
  const cli = spawnCli(cleanup, ['--config', path], { PORTCULLIS_LOG_LEVEL: 'info' });
  const url = await cli.waitForLine(READY_LINE);
  return { cli, url, path, markers, write };
}

/** Resolves once the gateway has logged `message` `times` times (JSON lines on stderr). */
export function logged(cli: CliProcess, message: string, times = 1): Promise<true> {
  return waitUntil(() => (cli.stderr().split(`"msg":"${message}`).length > times ? true : undefined), `${times} × log line "${message}"`);
}
