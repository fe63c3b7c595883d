/**
 * The options of a stdio upstream transport (`stdio-transport.ts`), checked once at construction
 * (a bad option is a `TypeError` at boot naming the server and the option, never a value), and
 * the redaction compiled from them: the values of the entry's explicit env, and the gateway's own
 * secrets, are masked wherever the child's output is logged.
 */
import type { Logger } from 'pino';
import { Redactor } from '../observability/logger.js';
import type { ChildCensus } from './child-census.js';
import { isInheritedEnvName } from './child-env.js';
import type { FramingMode } from './framing.js';

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
  /** Counts the child while it runs (the gateway's metrics). */
  census?: ChildCensus;
}

export const DEFAULT_KILL_GRACE_MS = 2000;
export const DEFAULT_DETECT_WINDOW_MS = 1000;

/** Throws a `TypeError` naming the server and the option when an option is unusable. */
export function validateStdioOptions(options: StdioUpstreamTransportOptions): void {
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

/** Masks the explicit env's values and the gateway's secrets; `cut` handles text cut at its end. */
export function stdioRedactor(options: StdioUpstreamTransportOptions): (text: string, cut?: boolean) => string {
  const explicitValues = Object.entries(options.env)
    .filter(([name]) => !isInheritedEnvName(name))
    .map(([, value]) => value);
  const own = new Redactor(explicitValues);
  const extra = options.redactor ?? new Redactor([]);
  return (text, cut = false) => (cut ? extra.redactCut(own.redactCut(text)) : extra.redact(own.redact(text)));
}
