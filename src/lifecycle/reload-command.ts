/**
 * `portcullis reload`, once the new config file has loaded: finds the running gateway (pid-file.ts),
 * signals it, and waits for its answer (reload-answer.ts) — then says what was applied, what
 * needs a restart, and what did not come up. Exit 0 only when the new configuration is in force
 * and every server it added or restarted is up; 1 when the gateway refused it (it keeps the
 * running one), a server did not come up, or no answer came within the wait.
 */
import type { ReloadOutcome } from './reload.js';
import { runningPid } from './pid-file.js';
import { readReloadAnswer } from './reload-answer.js';

/** How long to wait for the answer: a reload waits for the servers it adds or restarts to come up. */
export const RELOAD_ANSWER_TIMEOUT_MS = 120_000;
const POLL_MS = 100;

/** The report of one outcome, and the exit code it means. */
export function describeReloadOutcome(outcome: ReloadOutcome): { text: string; code: number } {
  if (!outcome.applied) {
    const restart = new Set(outcome.needsRestart);
    const invalid = outcome.problems.filter((problem) => !restart.has(problem));
    const lines = ['reload refused: the gateway keeps its running configuration'];
    if (invalid.length > 0) lines.push('  not accepted:', ...invalid.map((problem) => `    - ${problem}`));
    if (restart.size > 0) lines.push('  these need a restart (stop the gateway and start it again):', ...[...restart].map((problem) => `    - ${problem}`));
    return { text: `${lines.join('\n')}\n`, code: 1 };
  }
  const parts: Array<[string, readonly string[]]> = [
    ['added', outcome.added],
    ['removed', outcome.removed],
    ['restarted', outcome.restarted],
    ['tool filters re-applied', outcome.refiltered],
  ];
  const changes = parts.filter(([, names]) => names.length > 0).map(([what, names]) => `  ${what}: ${names.join(', ')}`);
  const lines = [changes.length === 0 ? 'reload applied: nothing that needs a server changed' : 'reload applied:', ...changes];
  if (outcome.failed.length > 0) {
    lines.push(`  did not come up (state "error", retrying in the background; the gateway's log says why): ${outcome.failed.join(', ')}`);
    return { text: `${lines.join('\n')}\n`, code: 1 };
  }
  return { text: `${lines.join('\n')}\n`, code: 0 };
}

/** Signals the gateway over `stateDir` and reports its answer; resolves with the exit code. */
export async function requestReload(stateDir: string, timeoutMs = RELOAD_ANSWER_TIMEOUT_MS): Promise<number> {
  const found = runningPid(stateDir);
  if (!found.ok) {
    process.stderr.write(`portcullis: ${found.message}\n`);
    return 1;
  }
  const before = readReloadAnswer(stateDir)?.tag;
  process.kill(found.pid, 'SIGHUP');
  process.stderr.write(`portcullis: configuration ok; asked the gateway (pid ${found.pid}) to reload, waiting for its answer\n`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const answer = readReloadAnswer(stateDir);
    if (answer !== undefined && answer.pid === found.pid && answer.tag !== before) {
      const { text, code } = describeReloadOutcome(answer.outcome);
      (code === 0 ? process.stdout : process.stderr).write(text);
      return code;
    }
    try {
      process.kill(found.pid, 0);
    } catch {
      process.stderr.write(`portcullis: the gateway (pid ${found.pid}) exited before it answered\n`);
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  process.stderr.write(`portcullis: no answer from the gateway (pid ${found.pid}) within ${Math.round(timeoutMs / 1000)} s; its log says what the reload did\n`);
  return 1;
}
