/**
 * What a stdio server entry may ask of the process the gateway starts for it: which program
 * (`stdioCommands`), which environment variables set explicitly (`stdioAllowedEnv`,
 * `stdioDeniedEnv`), and whether it may choose the working directory (`stdioAllowCwd`). Compiled
 * once from the policy; every predicate is pure.
 *
 * Why each rule exists is in `stdio-env-names.ts` and `policies/README.md`; in short, a config
 * line can turn a harmless-looking command into other code through its environment, and a
 * command allowlist names the programs a deployment is prepared to run.
 */
import { posix, win32 } from 'node:path';
import { compileGlob, type Glob } from './tool-filter.js';

/** `ok`; `denied` (matches `stdioDeniedEnv`); `unlisted` (the policy has an allowlist without it). */
export type StdioEnvVerdict = 'ok' | 'denied' | 'unlisted';

export interface StdioRulesInput {
  stdioDeniedEnv: readonly string[];
  stdioAllowedEnv?: readonly string[] | undefined;
  stdioCommands?: readonly string[] | undefined;
  stdioAllowCwd: boolean;
}

export interface StdioRules {
  /** May a stdio entry set this variable in its `env`? */
  envVerdict(name: string): StdioEnvVerdict;
  /** May a stdio entry run this `command` (as written in the config)? */
  commandAllowed(command: string): boolean;
  /** May a stdio entry set `cwd`? */
  readonly cwdAllowed: boolean;
}

/**
 * Variables that decide which program a bare command name runs. With a command allowlist they
 * are never settable, whatever the env lists say: `PATH=/tmp/x` would make an allowed `node`
 * mean `/tmp/x/node`.
 */
const COMMAND_RESOLUTION_ENV: readonly string[] = Object.freeze(['PATH', 'PATHEXT']);

/** A bare program name, resolved through the gateway's `PATH` (`node`, `npx`, `uvx`, `python3.12`). */
const BARE_COMMAND = /^[A-Za-z0-9_+-][A-Za-z0-9._+-]*$/;

function hasSeparator(command: string): boolean {
  return command.includes('/') || command.includes('\\');
}

/** An absolute path in canonical form (`/usr/bin/../bin/node` → `/usr/bin/node`), or undefined. */
function normalisedAbsolute(path: string): string | undefined {
  if (path.includes('\0')) return undefined;
  if (posix.isAbsolute(path)) return posix.normalize(path);
  if (win32.isAbsolute(path) && /^[A-Za-z]:[\\/]/.test(path)) return win32.normalize(path).toLowerCase();
  return undefined;
}

/** True for a valid `stdioCommands` entry: a bare program name or an absolute path. */
export function isStdioCommandEntry(entry: string): boolean {
  return hasSeparator(entry) ? normalisedAbsolute(entry) !== undefined : BARE_COMMAND.test(entry);
}

/**
 * Compiles `stdioCommands`: a bare entry matches exactly that bare command (found through the
 * gateway's own `PATH`, which a config cannot change while this list is present); an absolute
 * entry matches a command naming that path, after `.`/`..` segments are resolved. A bare entry
 * never admits an absolute command (`/tmp/evil/node` is not `node`), an absolute entry never a
 * bare one, and a relative path with a separator (`./node`, `bin/server`) matches nothing.
 * Absent: every command.
 */
export function compileStdioCommands(entries: readonly string[] | undefined): (command: string) => boolean {
  if (entries === undefined) return () => true;
  const bare = new Set<string>();
  const absolute = new Set<string>();
  entries.forEach((entry, index) => {
    if (!isStdioCommandEntry(entry)) throw new TypeError(`stdioCommands[${index}] is not a program name or an absolute path`);
    if (hasSeparator(entry)) absolute.add(normalisedAbsolute(entry)!);
    else bare.add(entry);
  });
  return function stdioCommandAllowed(command) {
    if (!hasSeparator(command)) return bare.has(command);
    const path = normalisedAbsolute(command);
    return path !== undefined && absolute.has(path);
  };
}

function anyMatch(globs: readonly Glob[], name: string): boolean {
  return globs.some((glob) => glob.test(name));
}

/** Compiles the stdio fields of a parsed policy. */
export function compileStdioRules(input: StdioRulesInput): StdioRules {
  const commandAllowed = compileStdioCommands(input.stdioCommands);
  const denied = [...input.stdioDeniedEnv, ...(input.stdioCommands === undefined ? [] : COMMAND_RESOLUTION_ENV)].map(compileGlob);
  const allowed = input.stdioAllowedEnv?.map(compileGlob);
  return {
    envVerdict(name) {
      if (anyMatch(denied, name)) return 'denied';
      if (allowed !== undefined && !anyMatch(allowed, name)) return 'unlisted';
      return 'ok';
    },
    commandAllowed,
    cwdAllowed: input.stdioAllowCwd,
  };
}
