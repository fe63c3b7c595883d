/**
 * Entry point: `portcullis --config FILE [--port N] [--host H]` runs the gateway and prints the
 * Ready line on stdout once every required upstream is up; `portcullis check --config FILE`
 * validates a config (exit 0, or 1 listing every problem) and warns about HTTP upstreams the
 * egress guard will refuse (`--resolve` looks their DNS names up too). SIGTERM/SIGINT drain and
 * exit 0.
 */
import { parseArgs } from 'node:util';
import { ConfigError, GatewayError } from './errors.js';
import { loadConfigFile, deepFreeze } from './config/load.js';
import type { GatewayConfig } from './config/schema.js';
import { startGateway, type RunningGateway } from './gateway.js';
import { configSecrets } from './config/secrets.js';
import { dropStdioWriteErrors } from './observability/log-sink.js';
import { createLogger, flushLogSync, parseLogLevel, Redactor, type Logger } from './observability/logger.js';
import { killAllStdioChildren } from './upstream/stdio-transport.js';
import { systemResolve } from './net/resolve-once.js';
import { blockedUpstreamWarnings } from './net/upstream-reachability.js';
import { gatewayJsonSchemaText } from './config/json-schema.js';
import { runImport } from './config/import-command.js';
import { ReloadTriggers } from './lifecycle/reload-triggers.js';
import { runningPid } from './lifecycle/pid-file.js';

const USAGE = `usage:
  portcullis --config FILE [--port N] [--host H]
  portcullis check --config FILE [--resolve]
  portcullis reload --config FILE    validate FILE, then make the gateway running with it reload
  portcullis schema                  print the config file's JSON Schema
  portcullis import FILE             convert a Claude Desktop / Cursor / VS Code / plugin mcp.json`;

export function readyLine(url: string): string {
  return `[portcullis]:Ready. ${url}`;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string', short: 'c' },
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      resolve: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** Applies `--port` / `--host` to a parsed config (a new frozen object; the original is untouched). */
export function withListenOverrides(config: Readonly<GatewayConfig>, port?: string, host?: string): Readonly<GatewayConfig> {
  if (port === undefined && host === undefined) return config;
  const listen = { ...config.listen };
  if (port !== undefined) {
    const value = Number(port);
    if (!Number.isInteger(value) || value < 0 || value > 65535) throw new ConfigError(['--port: must be an integer from 0 to 65535']);
    listen.port = value;
  }
  if (host !== undefined) listen.host = host;
  return deepFreeze({ ...config, listen });
}

/** The process logger: level from PORTCULLIS_LOG_LEVEL, every configured secret masked by value. */
export function gatewayLogger(config: Readonly<GatewayConfig>, env: Readonly<Record<string, string | undefined>>): Logger {
  return createLogger({ level: parseLogLevel(env.PORTCULLIS_LOG_LEVEL), redactor: new Redactor(configSecrets(config, env)) });
}

/** Signals that drain the gateway and exit 0. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = Object.freeze(['SIGTERM', 'SIGINT']);

/**
 * Runs a gateway until one of `stopSignals` arrives; resolves with the process exit code. The
 * handlers are installed before the gateway starts: a signal while the required servers come up
 * stops it as soon as it is up (its children reaped) instead of killing the process and
 * orphaning them. A second signal while draining stops at once. A stdout or stderr whose reader
 * went away loses what is written to it and stops nothing.
 */
export async function runGateway(
  config: Readonly<GatewayConfig>,
  logger: Logger,
  stopSignals: readonly NodeJS.Signals[] = STOP_SIGNALS,
  reloadConfig?: () => Promise<Readonly<GatewayConfig>>,
): Promise<number> {
  dropStdioWriteErrors();
  // SIGHUP reloads (lifecycle/reload-triggers.ts); caught from here on, so it never kills a starting gateway.
  const reloads = new ReloadTriggers();
  let requested: NodeJS.Signals | undefined;
  let onSignal = (signal: NodeJS.Signals): void => void (requested ??= signal);
  const handlers = stopSignals.map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  try {
    let gateway: RunningGateway;
    try {
      gateway = await startGateway({ config, logger, env: process.env, ...(reloadConfig === undefined ? {} : { reloadConfig }) });
    } catch (error) {
      const message = error instanceof GatewayError ? error.message : 'gateway failed to start';
      flushLogSync(logger); // the lines that led here come before the verdict
      process.stderr.write(`portcullis: ${message}\n`);
      return 1;
    }
    // Every line logged while starting ("upstream ready" …) is out before the Ready line.
    flushLogSync(logger);
    if (requested === undefined) process.stdout.write(`${readyLine(gateway.publicUrl)}\n`);
    await reloads.attach(gateway, config, logger);
    return await new Promise<number>((resolve) => {
      let stopping = false;
      let exiting = false;
      // The process exits right after: buffered log lines are written out first.
      const exitWith = (code: number, message: string) => {
        if (exiting) return;
        exiting = true;
        logger.info({ code }, message);
        flushLogSync(logger);
        resolve(code);
      };
      const stop = (signal: NodeJS.Signals) => {
        if (stopping) {
          killAllStdioChildren();
          exitWith(1, 'stopped by a second signal');
          return;
        }
        stopping = true;
        reloads.close();
        logger.info({ signal }, 'shutting down');
        // The drain deadline, then at most 10 s to close sessions and reap children.
        const force = setTimeout(() => {
          killAllStdioChildren();
          exitWith(1, 'shutdown timed out');
        }, config.lifecycle.drainTimeoutMs + 10_000);
        force.unref();
        // Drain (refuse new requests, let calls finish, end streams), then the ordinary close;
        // every sink is flushed by exitWith once the close has resolved.
        gateway
          .drain()
          .then(() => gateway.close())
          .then(() => exitWith(0, 'stopped'), () => exitWith(1, 'shutdown failed'))
          .finally(() => clearTimeout(force));
      };
      onSignal = stop;
      if (requested !== undefined) stop(requested);
    });
  } finally {
    reloads.close();
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

export async function main(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (error) {
    process.stderr.write(`portcullis: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (args.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, ...rest] = args.positionals;
  if (command === 'schema' && rest.length === 0) {
    process.stdout.write(gatewayJsonSchemaText());
    return 0;
  }
  if (command === 'import' && rest.length === 1) return runImport(rest[0]!);
  if ((command !== undefined && command !== 'check' && command !== 'reload') || rest.length > 0) {
    process.stderr.write(`portcullis: unknown command\n${USAGE}\n`);
    return 2;
  }
  if (args.values.config === undefined) {
    process.stderr.write(`portcullis: --config FILE is required\n${USAGE}\n`);
    return 2;
  }
  let config: Readonly<GatewayConfig>;
  try {
    config = withListenOverrides(await loadConfigFile(args.values.config), args.values.port, args.values.host);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`portcullis: ${error.problems.length} problem(s) in the configuration:\n`);
      for (const problem of error.problems) process.stderr.write(`  - ${problem}\n`);
      return 1;
    }
    process.stderr.write(`portcullis: ${error instanceof GatewayError ? error.message : 'cannot load configuration'}\n`);
    return 1;
  }
  if (command === 'reload') return requestReload(config);
  if (command === 'check') {
    // Warnings, not problems: the config is valid, but these upstreams will be refused when dialled.
    const warnings = await blockedUpstreamWarnings(config, args.values.resolve === true ? { resolve: systemResolve } : {});
    for (const warning of warnings) process.stderr.write(`portcullis: warning: ${warning}\n`);
    process.stdout.write(`configuration ok: ${Object.keys(config.servers).length} server(s)${warnings.length > 0 ? `, ${warnings.length} warning(s)` : ''}\n`);
    return 0;
  }
  let logger: Logger;
  try {
    logger = gatewayLogger(config, process.env);
  } catch (error) {
    process.stderr.write(`portcullis: PORTCULLIS_LOG_LEVEL: ${(error as Error).message}\n`);
    return 2;
  }
  const path = args.values.config;
  const reread = async () => withListenOverrides(await loadConfigFile(path), args.values.port, args.values.host);
  return runGateway(config, logger, STOP_SIGNALS, reread);
}

/**
 * `portcullis reload`: the config has been validated (a broken one never reaches the gateway);
 * the gateway running over the same state directory gets SIGHUP and logs what it applied.
 */
function requestReload(config: Readonly<GatewayConfig>): number {
  const found = runningPid(config.stateDir);
  if (!found.ok) {
    process.stderr.write(`portcullis: ${found.message}\n`);
    return 1;
  }
  process.kill(found.pid, 'SIGHUP');
  process.stdout.write(`reload requested: configuration ok, SIGHUP sent to the gateway (pid ${found.pid}); its log says what was applied\n`);
  return 0;
}
