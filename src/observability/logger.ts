/**
 * The gateway's structured logger (pino). One root logger per process; components take child
 * loggers that carry their context (`server`, `session`). Secrets never reach a log line: header
 * values are redacted by path here, and by value through `Redactor` where a value could appear
 * inside free text (stderr of children, upstream error messages).
 */
import { pino, type Logger, type LevelWithSilent, type DestinationStream } from 'pino';

export type { Logger };

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Where lines go; defaults to stderr so stdout stays free for the Ready line. */
  destination?: DestinationStream;
}

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

export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? pino.destination({ fd: 2, sync: false });
  return pino(
    {
      level: options.level ?? 'info',
      base: { name: 'portcullis' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination,
  );
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
    // masking "1" everywhere would destroy logs and protects nothing.
    this.secrets = [...new Set(secrets)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    }
    return out;
  }
}
