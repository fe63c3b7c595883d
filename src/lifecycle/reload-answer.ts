/**
 * How `portcullis reload` hears what its SIGHUP did: after each reload a signal asked for, the
 * gateway writes the outcome to `<stateDir>/reload-answer.json` (written to a temporary file and
 * renamed, so a reader never sees half of it), tagged with its pid and a per-process sequence
 * number. The command notes the tag before it signals and waits for a new one from the same pid.
 * The outcome names servers and config fields, never a value (config-diff.ts), like the log.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReloadOutcome } from './reload.js';

export const RELOAD_ANSWER_FILE_NAME = 'reload-answer.json';

export interface ReloadAnswer {
  /** `<pid>:<sequence>`: a new tag for every answer, also across gateway restarts. */
  readonly tag: string;
  readonly pid: number;
  readonly outcome: ReloadOutcome;
}

export function reloadAnswerPath(stateDir: string): string {
  return join(stateDir, RELOAD_ANSWER_FILE_NAME);
}

let sequence = 0;

/** Writes the answer to the latest signalled reload (the state directory exists: the pid file is in it). */
export function writeReloadAnswer(stateDir: string, outcome: ReloadOutcome): void {
  const path = reloadAnswerPath(stateDir);
  const answer: ReloadAnswer = { tag: `${process.pid}:${++sequence}`, pid: process.pid, outcome };
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(answer)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** The answer in the state directory, if there is a readable one. */
export function readReloadAnswer(stateDir: string): ReloadAnswer | undefined {
  try {
    const parsed = JSON.parse(readFileSync(reloadAnswerPath(stateDir), 'utf8')) as Partial<ReloadAnswer>;
    if (typeof parsed.tag !== 'string' || typeof parsed.pid !== 'number' || typeof parsed.outcome !== 'object' || parsed.outcome === null) return undefined;
    return parsed as ReloadAnswer;
  } catch {
    return undefined;
  }
}
