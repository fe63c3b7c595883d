/**
 * How `portcullis reload` finds the running gateway: the gateway writes its pid to
 * `<stateDir>/portcullis.pid` once it is Ready and removes the file when it exits; the reload
 * command reads it and sends SIGHUP. A signal needs no listener, no credential and no port, and
 * only a user allowed to signal the process (its owner, or root) can trigger a reload.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PID_FILE_NAME = 'portcullis.pid';

export function pidFilePath(stateDir: string): string {
  return join(stateDir, PID_FILE_NAME);
}

/** Writes this process's pid (creating the state directory); returns the remover, which leaves another process's file alone. */
export function writePidFile(stateDir: string): () => void {
  const path = pidFilePath(stateDir);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(path, `${process.pid}\n`, { mode: 0o644 });
  return () => {
    try {
      if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
    } catch {
      // already gone
    }
  };
}

export type RunningPid = { ok: true; pid: number } | { ok: false; message: string };

/** The pid of the gateway running over `stateDir`, checked to be alive. */
export function runningPid(stateDir: string): RunningPid {
  const path = pidFilePath(stateDir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { ok: false, message: `no running gateway found: ${path} does not exist (is the gateway running with this config?)` };
  }
  const pid = Number(text.trim());
  if (!Number.isInteger(pid) || pid <= 0) return { ok: false, message: `${path} does not hold a pid` };
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPERM') return { ok: false, message: `not allowed to signal the gateway (pid ${pid}): run as its user` };
    return { ok: false, message: `no running gateway found: ${path} names pid ${pid}, which has exited` };
  }
  return { ok: true, pid };
}
