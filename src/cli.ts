/**
 * Entry point, the `portcullis` command line (commander): `portcullis [start] --config FILE
 * [--port N] [--host H]` runs the gateway and prints the Ready line on stdout once every required
 * upstream is up; `check` validates a config (exit 0, or 1 listing every problem) and warns about
 * HTTP upstreams the egress guard will refuse; `reload`, `schema`, `import`, `help [command]` and
 * `--version`. Usage errors exit 2. SIGTERM/SIGINT drain and exit 0.
 */
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, GatewayError } from './errors.js';
import { loadConfigFile, deepFreeze } from './config/load.js';
import type { GatewayConfig } from './config/schema.js';
import { startGateway, type RunningGateway } from './gateway.js';
import { configSecrets } from './config/secrets.js';
import { dropStdioWriteErrors } from './observability/log-sink.js';
import { createLogger, flushLogSync, parseLogFormat, parseLogLevel, Redactor, type Logger } from './observability/logger.js';
import { gatewayUrls, startBanner } from './composition/start-banner.js';
import { GATEWAY_VERSION } from './composition/package-version.js';
import { killAllStdioChildren } from './upstream/stdio-transport.js';
import { runCheck } from './composition/check.js';
import { gatewayJsonSchemaText } from './config/json-schema.js';
import { runImport } from './config/import-command.js';
import { ReloadTriggers } from './lifecycle/reload-triggers.js';
import { requestReload } from './lifecycle/reload-command.js';

export function readyLine(url: string): string {
  return `[portcullis]:Ready. ${url}`;
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

/**
 * The process logger: level from PORTCULLIS_LOG_LEVEL, every configured secret masked by value;
 * readable lines when stderr is a terminal, JSON otherwise (PORTCULLIS_LOG_FORMAT=json|pretty
 * decides instead; NO_COLOR drops the colours).
 */
export function gatewayLogger(config: Readonly<GatewayConfig>, env: Readonly<Record<string, string | undefined>>): Logger {
  const terminal = process.stderr.isTTY === true;
  return createLogger({
    level: parseLogLevel(env.PORTCULLIS_LOG_LEVEL),
    format: parseLogFormat(env.PORTCULLIS_LOG_FORMAT, terminal),
    colors: terminal && (env.NO_COLOR === undefined || env.NO_COLOR === '') && process.stderr.hasColors(),
    redactor: new Redactor(configSecrets(config, env)),
  });
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
    if (requested === undefined) {
      process.stdout.write(`${readyLine(gateway.publicUrl)}\n`);
      // A person at a terminal gets where to look and how to connect; a collector gets the same URLs as fields.
      if (process.stdout.isTTY === true) {
        process.stdout.write(startBanner({ mcpUrl: gateway.publicUrl, version: GATEWAY_VERSION, servers: Object.keys(config.servers) }));
      } else {
        logger.info(gatewayUrls(gateway.publicUrl), 'serving');
      }
    }
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


/** What every config-reading command takes. */
interface ConfigOptions {
  config: string;
}

interface StartOptions extends ConfigOptions {
  port?: string;
  host?: string;
}

/** Loads the config file and applies `--port` / `--host`; on failure prints every problem and answers the exit code. */
async function loadForCommand(options: StartOptions): Promise<Readonly<GatewayConfig> | number> {
  try {
    return withListenOverrides(await loadConfigFile(options.config), options.port, options.host);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`portcullis: ${error.problems.length} problem(s) in the configuration:\n`);
      for (const problem of error.problems) process.stderr.write(`  - ${problem}\n`);
      return 1;
    }
    process.stderr.write(`portcullis: ${error instanceof GatewayError ? error.message : 'cannot load configuration'}\n`);
    return 1;
  }
}

async function startCommand(options: StartOptions): Promise<number> {
  const config = await loadForCommand(options);
  if (typeof config === 'number') return config;
  let logger: Logger;
  try {
    logger = gatewayLogger(config, process.env);
  } catch (error) {
    process.stderr.write(`portcullis: PORTCULLIS_LOG_LEVEL / PORTCULLIS_LOG_FORMAT: ${(error as Error).message}\n`);
    return 2;
  }
  const reread = async () => withListenOverrides(await loadConfigFile(options.config), options.port, options.host);
  return runGateway(config, logger, STOP_SIGNALS, reread);
}

async function checkCommand(options: ConfigOptions & { resolve?: boolean }): Promise<number> {
  const config = await loadForCommand(options);
  if (typeof config === 'number') return config;
  // The start's own rules (composition/preflight.ts), then with --resolve the network ones.
  const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);
  return runCheck(config, process.env, { resolve: options.resolve === true, out: write(process.stdout), err: write(process.stderr) });
}

async function reloadCommand(options: ConfigOptions): Promise<number> {
  const config = await loadForCommand(options);
  if (typeof config === 'number') return config;
  return requestReload(config.stateDir);
}

/** Adds a command's examples below its options in its own `--help`. */
function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`;
}

/**
 * The command line, parsed by commander: `portcullis [start]`, `check`, `reload`, `schema`,
 * `import`, `help [command]`, `--version`. Each command has its own `--help` with an example.
 * Options written after a command belong to it (positional options), so `check --config` is
 * check's. The action's exit code is written to `exit`.
 */
function buildProgram(exit: { code: number }): Command {
  const configOption = () => new Option('-c, --config <file>', 'the gateway config file (JSON with comments)').makeOptionMandatory();
  const program = new Command('portcullis')
    .description('A gateway for MCP servers: one URL in front of all of them, under one security policy.')
    .version(GATEWAY_VERSION, '-v, --version', 'print the version and exit')
    .helpOption('-h, --help', 'show this help')
    .enablePositionalOptions()
    .showHelpAfterError('(run `portcullis help` for the commands, `portcullis help <command>` for one)')
    .exitOverride();

  program
    .command('start', { isDefault: true })
    .description('run the gateway (the default command: `portcullis --config FILE` is the same)')
    .addOption(configOption())
    // The environment variables let an image or a service unit set the listener without a shell (Dockerfile).
    .addOption(new Option('-p, --port <n>', "listen on this port instead of the config's (0: a free one)").env('PORTCULLIS_PORT'))
    .addOption(new Option('--host <address>', "listen on this address instead of the config's").env('PORTCULLIS_HOST'))
    .addHelpText('after', examples('portcullis --config gateway.json', 'portcullis start --config gateway.json --port 0   # a free port, shown on the Ready line'))
    .action(async (options: StartOptions) => void (exit.code = await startCommand(options)));

  program
    .command('check')
    .description('validate a config without starting it: exit 0, or 1 listing every problem')
    .addOption(configOption())
    .option('--resolve', 'also look up DNS names of HTTP upstreams the egress guard would refuse')
    .addHelpText('after', examples('portcullis check --config gateway.json', 'portcullis check --config gateway.json --resolve'))
    .action(async (options: ConfigOptions & { resolve?: boolean }) => void (exit.code = await checkCommand(options)));

  program
    .command('reload')
    .description('validate a config, then make the gateway running with it re-read it')
    .addOption(configOption())
    .addHelpText('after', examples('portcullis reload --config gateway.json'))
    .action(async (options: ConfigOptions) => void (exit.code = await reloadCommand(options)));

  program
    .command('schema')
    .description("print the config file's JSON Schema (for editors: \"$schema\" in the config)")
    .addHelpText('after', examples('portcullis schema > gateway.schema.json'))
    .action(() => {
      process.stdout.write(gatewayJsonSchemaText());
      exit.code = 0;
    });

  program
    .command('import')
    .description('convert a Claude Desktop / Cursor / VS Code / plugin mcp.json into a gateway config on stdout')
    .argument('<file>', 'the mcp.json (or claude_desktop_config.json) to convert')
    .addHelpText('after', examples('portcullis import ~/.cursor/mcp.json > gateway.json', 'portcullis import .vscode/mcp.json > gateway.json'))
    .action(async (file: string) => void (exit.code = await runImport(file)));

  program.addHelpText('after', examples('portcullis --config gateway.json', 'portcullis help check'));
  // Every subcommand reports its errors as the program does (exit code, hint after the error).
  for (const command of program.commands) command.exitOverride().showHelpAfterError(`(run \`portcullis help ${command.name()}\` for its usage)`);
  return program;
}

/** Runs the command line; resolves with the process exit code (2 for a usage error, 0 for help and --version). */
export async function main(argv: string[]): Promise<number> {
  const exit = { code: 0 };
  const program = buildProgram(exit);
  // A first word that is no command would otherwise reach the default command as an argument.
  const [first] = argv;
  if (first !== undefined && !first.startsWith('-') && first !== 'help' && !program.commands.some((command) => command.name() === first)) {
    const names = program.commands.map((command) => command.name());
    process.stderr.write(`error: unknown command '${first}' (the commands: ${names.join(', ')}, help)\n(run \`portcullis help\` for the commands, \`portcullis help <command>\` for one)\n`);
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
  return exit.code;
}
