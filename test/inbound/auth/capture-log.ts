/** A debug-level pino logger whose every line is kept, to prove what auth code does (not) log. */
import { createLogger, type Logger } from '../../../src/observability/logger.js';

export interface CapturedLog {
  logger: Logger;
  readonly lines: string[];
}

export function captureLog(): CapturedLog {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
  return { logger, lines };
}

/** Every substring of `secret` at least `min` long that a leak could show, sampled at both ends and the middle. */
export function secretFragments(secret: string, min = 8): string[] {
  if (secret.length <= min) return [secret];
  const middle = Math.floor((secret.length - min) / 2);
  return [secret, secret.slice(0, min), secret.slice(-min), secret.slice(middle, middle + min)];
}

/** True when any fragment of any secret occurs in any of the texts. */
export function leaks(texts: readonly string[], secrets: readonly string[]): string | undefined {
  for (const secret of secrets) {
    for (const fragment of secretFragments(secret)) {
      const hit = texts.find((text) => text.includes(fragment));
      if (hit !== undefined) return `fragment of a secret found in: ${hit.slice(0, 200)}`;
    }
  }
  return undefined;
}
