/**
 * The environment a stdio server child starts with: a minimal inherited set plus the server
 * entry's explicit `env`, which wins.
 *
 * Why minimal: the gateway's own environment holds its secrets (upstream tokens read through
 * `envHeaders`, cloud credentials, a Redis URL). Passing it whole hands every one of them to every
 * third-party server it runs (docs/decisions.md, "stdio children"). The inherited set is what a
 * program needs to find executables, a home directory, a temp directory, its locale and time zone.
 * `SHELL` is left out on purpose: children are spawned without a shell, and a server that wants one
 * should not pick up the operator's.
 *
 * The policy's env rules (`stdioDeniedEnv`, `stdioAllowedEnv`; checked when the config is loaded)
 * govern what a config entry sets explicitly; the inherited values are the gateway's own, which no
 * config line can choose. So a strict allowlist that does not name `PATH` or `HOME` still leaves
 * the child able to find its interpreter and a home directory — the gateway's — while a config that
 * tries to point either elsewhere is refused. Nothing outside this list is ever inherited, so the
 * gateway's own `OPENSSL_CONF`, `NODE_OPTIONS`, proxies or credentials cannot reach a child either.
 */

/** Inherited on POSIX systems (exact names). */
export const POSIX_INHERITED_ENV: readonly string[] = Object.freeze([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'TERM',
]);

/** Inherited on Windows (matched case-insensitively, as Windows does). */
export const WINDOWS_INHERITED_ENV: readonly string[] = Object.freeze([
  'PATH',
  'PATHEXT',
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'PROGRAMW6432',
  'HOMEDRIVE',
  'HOMEPATH',
  'USERPROFILE',
  'USERNAME',
  'TEMP',
  'TMP',
  'PROCESSOR_ARCHITECTURE',
  'NUMBER_OF_PROCESSORS',
  'TZ',
]);

export interface ChildEnvOptions {
  /** Whose naming rules apply; default `process.platform`. */
  platform?: NodeJS.Platform;
}

/** True when `name` is one the child inherits from the gateway on `platform`. */
export function isInheritedEnvName(name: string, platform: NodeJS.Platform = process.platform): boolean {
  return platform === 'win32'
    ? WINDOWS_INHERITED_ENV.includes(name.toUpperCase())
    : POSIX_INHERITED_ENV.includes(name);
}

/**
 * Builds a child's environment from the gateway's (`parentEnv`, passed in: this never reads
 * `process.env`) and the entry's explicit `env`.
 *
 * - Only the inherited names are taken from `parentEnv`; unset ones are left out.
 * - An inherited value starting with `()` is dropped: that is how bash exports functions, the
 *   vector of Shellshock (CVE-2014-6271) in children that run bash.
 * - Explicit values win; on Windows they replace an inherited name of any letter case.
 * - A name that is empty or holds `=` or NUL, or a value holding NUL, throws a `TypeError`
 *   naming the variable, never showing the value (Node's own spawn error would quote it).
 */
export function buildChildEnv(
  parentEnv: Readonly<Record<string, string | undefined>>,
  explicitEnv: Readonly<Record<string, string>>,
  options: ChildEnvOptions = {},
): Record<string, string> {
  const platform = options.platform ?? process.platform;
  const fold = platform === 'win32' ? (name: string) => name.toUpperCase() : (name: string) => name;
  const explicitNames = new Set<string>();
  for (const [name, value] of Object.entries(explicitEnv)) {
    if (name === '' || name.includes('=') || name.includes('\0')) {
      throw new TypeError('env: a variable name is empty or contains "=" or NUL');
    }
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new TypeError(`env "${name}": value must be a string without NUL bytes`);
    }
    explicitNames.add(fold(name));
  }
  const entries: [string, string][] = [];
  for (const [name, value] of Object.entries(parentEnv)) {
    if (value === undefined || !isInheritedEnvName(name, platform)) continue;
    if (explicitNames.has(fold(name)) || value.startsWith('()') || value.includes('\0')) continue;
    entries.push([name, value]);
  }
  entries.push(...Object.entries(explicitEnv));
  // fromEntries defines own properties, so a name like "__proto__" stays a plain variable.
  return Object.fromEntries(entries);
}
