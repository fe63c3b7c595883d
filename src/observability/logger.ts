/**
 * The gateway's structured logger (pino). One root logger per process; components take child
 * loggers that carry their context (`server`, `session`). Secrets never reach a log line: header
 * values are redacted by path here, and by value through `Redactor` where a value could appear
 * inside free text (stderr of children, upstream error messages).
 */
import { pino, type Logger, type LevelWithSilent, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { createFdSink, type FdSink } from './log-sink.js';

export type { Logger };

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Where lines go; defaults to stderr so stdout stays free for the Ready line. */
  destination?: DestinationStream;
  /** Masks known secret values in every serialised line, wherever they appear. */
  redactor?: Redactor;
  /**
   * `json` (default): one JSON object a line, for collectors. `pretty`: one readable line per
   * record (time, level, message, fields) through pino-pretty, for a person at a terminal;
   * `colors` adds ANSI colours. Applies to the default destination (stderr) only.
   */
  format?: LogFormat;
  colors?: boolean;
}

export type LogFormat = 'json' | 'pretty';

const REDACT_PATHS = [
  'headers.*',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.headers.*',
  'authorization',
  'token',
  '*.token',
  'env.*',
  '*.env.*',
];

/**
 * Lines are written to stderr in batches of at least this many bytes (one write per line cost a
 * syscall per call under load), and at least this often, so a quiet gateway's lines still show.
 * Whatever is buffered at exit is written synchronously: by `flushLogSync` on the CLI's exit
 * paths, and by the sink's own process 'exit' hook (which also runs on `process.exit()` and on an
 * uncaught exception). A stderr whose reader is gone costs the lines, never the process
 * (`log-sink.ts`).
 */
const BATCH_BYTES = 4096;
const BATCH_INTERVAL_MS = 250;
/** Lines kept while stderr's reader is slow; beyond it they are dropped and counted. */
const MAX_PENDING_BYTES = 4 * 1024 * 1024;

/** Each logger `createLogger` built → its sibling without path redaction (`fixedFieldLogger`). */
const unredacted = new WeakMap<Logger, Logger>();

export function createLogger(options: LoggerOptions = {}): Logger {
  const sink = () => createFdSink({ fd: 2, minBytes: BATCH_BYTES, flushIntervalMs: BATCH_INTERVAL_MS, maxPendingBytes: MAX_PENDING_BYTES });
  const destination = options.destination ?? (options.format === 'pretty' ? prettySink(sink(), options.colors === true) : sink());
  const common = {
    level: options.level ?? 'info',
    base: { name: 'portcullis' },
    // By value, after serialisation: a secret inside free text (an upstream's stderr line, an
    // error message) is masked too, in its JSON-escaped form.
    ...(options.redactor === undefined || options.redactor.empty
      ? {}
      : { hooks: { streamWrite: (line: string) => options.redactor!.redact(line) } }),
  };
  const root = pino({ ...common, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
  unredacted.set(root, pino(common, destination));
  return root;
}

/**
 * Readable lines on the same batching sink (so a terminal that goes away costs lines, never the
 * process): each JSON line, already masked by the redactor, is turned into
 * `[12:00:01] INFO: upstream ready {"server":"files"}` by pino-pretty's formatter. Fields stay on
 * the record's line (`singleLine`) so one record is one line, as in JSON.
 */
function prettySink(sink: FdSink, colors: boolean): DestinationStream & { flushSync(): void } {
  // No error-like keys: an `err` field stays on its record's line like any other field.
  const format = prettyFactory({ colorize: colors, singleLine: true, errorLikeObjectKeys: [], translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,name' });
  return {
    write: (line: string) => sink.write(format(line)),
    flushSync: () => sink.flushSync(),
  };
}

/** The log format for a destination: `PORTCULLIS_LOG_FORMAT` (`json`, `pretty`) when set, else pretty on a terminal. */
export function parseLogFormat(value: string | undefined, isTerminal: boolean): LogFormat {
  if (value === undefined || value === '') return isTerminal ? 'pretty' : 'json';
  if (value !== 'json' && value !== 'pretty') throw new TypeError('log format must be json or pretty');
  return value;
}

/**
 * The logger for lines of fixed fields that never hold headers, tokens or environment values
 * (the per-request `rpc` line): same destination, level and by-value masking, but no path
 * redaction, which walks every line (~4 µs each, measured) and could match nothing there.
 * Any other logger is returned as it is.
 */
export function fixedFieldLogger(logger: Logger): Logger {
  return unredacted.get(logger) ?? logger;
}

/**
 * Writes every line the logger's destination still buffers, synchronously: for exit paths, where
 * an asynchronous write would be cut short. Never throws and never blocks without bound (a
 * destination without a buffer, or a stderr already gone, has nothing more to write).
 */
export function flushLogSync(logger: Logger): void {
  const stream: unknown = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym];
  const flushSync = (stream as { flushSync?: unknown } | undefined)?.flushSync;
  if (typeof flushSync !== 'function') return;
  try {
    flushSync.call(stream);
  } catch {
    // destroyed, or stderr closed (EPIPE): nothing more can be written
  }
}

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Parses a log level name (e.g. from PORTCULLIS_LOG_LEVEL); throws a TypeError naming the choices. */
export function parseLogLevel(value: string | undefined, fallback: LevelWithSilent = 'info'): LevelWithSilent {
  if (value === undefined || value === '') return fallback;
  if (!LEVELS.has(value)) throw new TypeError(`log level must be one of ${[...LEVELS].join(', ')}`);
  return value as LevelWithSilent;
}

/** A logger that drops everything (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/**
 * Masks known secret values wherever they appear inside a string. Built once from every secret
 * the configuration knows about (header values, env-sourced values); cheap when there are none.
 */
export class Redactor {
  private readonly secrets: string[];

  constructor(secrets: Iterable<string>) {
    // Longest first so a secret containing another is masked whole. Very short values are skipped:
    // masking "1" everywhere would destroy logs and protects nothing. Each secret is also masked
    // in its JSON-escaped form, which is how it appears inside a serialised log line.
    const forms = new Set<string>();
    for (const secret of secrets) {
      if (secret.length < 4) continue;
      forms.add(secret);
      forms.add(JSON.stringify(secret).slice(1, -1));
    }
    this.secrets = [...forms].sort((a, b) => b.length - a.length);
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  /**
   * Like `redact`, for text that was cut at its end (a truncated line or preview): a secret the cut
   * went through leaves only its first part, which `redact` would not recognise; any such trailing
   * part (4 characters or more) is masked too.
   */
  redactCut(text: string): string {
    // A cut inside a multi-byte character leaves a replacement character at the end: drop it
    // so the head of a non-ASCII secret still matches.
    const out = this.redact(text.endsWith('\uFFFD') ? text.replace(/\uFFFD+$/, '') : text);
    for (const secret of this.secrets) {
      for (let k = Math.min(secret.length - 1, out.length); k >= 4; k--) {
        if (out.endsWith(secret.slice(0, k))) return `${out.slice(0, out.length - k)}[redacted]`;
      }
    }
    return out;
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    }
    return out;
  }
}
