/**
 * One server entry of a plugin's MCP configuration, checked for shape only (no filesystem): the
 * closed variants of Agent Plugins 1.0 §7.2.1 — `stdio` {command, args, env, cwd} and
 * `streamable-http` | `sse` {url, headers} — with an unknown field, an unknown `type` or another
 * variant's field making the entry invalid.
 *
 * Open Plugins and Claude Code entries use the Claude Desktop shape (`command`/`args`/`env`, or
 * `url` with an optional `type`); they are mapped onto the same variants first, so one set of
 * rules applies to every layout. Messages name the field, never its value.
 */
import { checkUpstreamUrl, type UpstreamUrlCode } from '../policy/upstream-url.js';
import { quoteName } from './naming.js';
import type { Placeholders } from './placeholders.js';
import { isRecord } from './json-value.js';

export type ServerEntry =
  | {
      readonly type: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      readonly env: readonly (readonly [string, string])[];
      readonly cwd?: string;
    }
  | { readonly type: 'streamable-http' | 'sse'; readonly url: string; readonly headers: readonly (readonly [string, string])[] };

export type EntryCheck = { ok: true; entry: ServerEntry } | { ok: false; field?: string; message: string };

/** Which shape the entry was written in. */
export type EntryShape = 'agent-plugins' | 'desktop';

export const MAX_ARGS = 256;
export const MAX_ENV = 256;
export const MAX_HEADERS = 64;
/** Per string: a single argument, env value or header value beyond this is not configuration. */
export const MAX_VALUE_CHARS = 32_768;

const STDIO_FIELDS = new Set(['type', 'command', 'args', 'env', 'cwd']);
const REMOTE_FIELDS = new Set(['type', 'url', 'headers']);
/** `type` spellings of the Claude Desktop / VS Code / Claude Code formats. */
const DESKTOP_TYPES: Record<string, 'stdio' | 'streamable-http' | 'sse'> = {
  stdio: 'stdio',
  http: 'streamable-http',
  'streamable-http': 'streamable-http',
  sse: 'sse',
};
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Header values go on the wire verbatim: CR/LF would split headers, NUL is never valid. */
const UNSAFE_HEADER_VALUE = /[\r\n\0]/;
/** One executable token: no whitespace, no path separators (a bare name is looked up on PATH). */
const BARE_COMMAND = /^[^\s/\\]+$/;

/** Plugins have no `envHeaders`, so the rule's own advice does not apply: phrased for them. */
const URL_MESSAGES: Record<UpstreamUrlCode, string> = {
  URL_INVALID: 'must be an absolute http: or https: URL',
  URL_SCHEME: 'must use https: (or http: to localhost or a loopback address)',
  URL_USERINFO: 'must not contain credentials (user information)',
  URL_HTTP_NOT_LOOPBACK: 'uses http: to a host that is not loopback; use https:',
};

/** Zod records drop a `__proto__` key silently; refusing it keeps what runs equal to what was declared. */
function isPlainKey(name: string): boolean {
  return name !== '__proto__';
}

function fail(field: string | undefined, message: string): EntryCheck {
  return field === undefined ? { ok: false, message } : { ok: false, field, message };
}

/** Maps a Claude Desktop-shaped entry's `type` (or its absence) onto a variant. */
function desktopType(raw: Record<string, unknown>): { ok: true; type: 'stdio' | 'streamable-http' | 'sse' } | Extract<EntryCheck, { ok: false }> {
  if (raw.type === undefined) {
    if (raw.command !== undefined && raw.url !== undefined) return { ok: false, message: 'has both "command" and "url"; a server is either stdio or remote' };
    if (raw.command !== undefined) return { ok: true, type: 'stdio' };
    if (raw.url !== undefined) return { ok: true, type: 'streamable-http' };
    return { ok: false, message: 'needs "command" (stdio) or "url" (remote)' };
  }
  const type = typeof raw.type === 'string' && Object.hasOwn(DESKTOP_TYPES, raw.type) ? DESKTOP_TYPES[raw.type] : undefined;
  return type === undefined ? { ok: false, field: 'type', message: 'unknown transport type (use "stdio", "http" or "sse")' } : { ok: true, type };
}

/** Checks the shape of one entry. */
export function checkServerEntry(raw: unknown, shape: EntryShape, placeholders: Placeholders): EntryCheck {
  if (!isRecord(raw)) return fail(undefined, 'entry must be an object');
  let type: 'stdio' | 'streamable-http' | 'sse';
  if (shape === 'agent-plugins') {
    if (raw.type === undefined) return fail('type', 'is required ("stdio", "streamable-http" or "sse")');
    if (raw.type !== 'stdio' && raw.type !== 'streamable-http' && raw.type !== 'sse') {
      return fail('type', 'unknown transport type (use "stdio", "streamable-http" or "sse")');
    }
    type = raw.type;
  } else {
    const mapped = desktopType(raw);
    if (!mapped.ok) return mapped;
    type = mapped.type;
  }
  const allowed = type === 'stdio' ? STDIO_FIELDS : REMOTE_FIELDS;
  const unknown = Object.keys(raw).find((key) => !allowed.has(key));
  if (unknown !== undefined) {
    return fail(quoteName(unknown), `is not a field of a ${type} server (a closed set: ${[...allowed].join(', ')})`);
  }
  return type === 'stdio' ? checkStdio(raw, placeholders) : checkRemote(raw, type);
}

function checkStdio(raw: Record<string, unknown>, placeholders: Placeholders): EntryCheck {
  const { command, args = [], env = {}, cwd } = raw;
  if (typeof command !== 'string' || command.length === 0) return fail('command', 'must be a non-empty string');
  if (command.includes('${')) {
    return fail('command', 'is never expanded; a bundled executable is named "./path/inside/the/plugin"');
  }
  if (command.startsWith('./')) {
    if (/\s/.test(command) || command.length === 2) return fail('command', 'must be a single executable token (put arguments in "args")');
  } else if (!BARE_COMMAND.test(command) || command === '.' || command === '..') {
    return fail('command', 'must be one token: a bare executable name (looked up on PATH) or a "./" path inside the plugin');
  }
  if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string')) return fail('args', 'must be an array of strings');
  if (args.length > MAX_ARGS) return fail('args', `has more than ${MAX_ARGS} elements`);
  if (args.some((arg: string) => arg.length > MAX_VALUE_CHARS || arg.includes('\0'))) {
    return fail('args', `an argument is longer than ${MAX_VALUE_CHARS} characters or contains NUL`);
  }
  if (!isRecord(env)) return fail('env', 'must be an object of strings');
  const entries = Object.entries(env);
  if (entries.length > MAX_ENV) return fail('env', `has more than ${MAX_ENV} variables`);
  const envOut: [string, string][] = [];
  for (const [name, value] of entries) {
    if (!ENV_NAME.test(name) || !isPlainKey(name)) return fail('env', 'a variable name is not a valid environment variable name');
    if (placeholders.reserved.includes(name)) {
      return fail(`env.${name}`, 'is set by the gateway for every plugin server and may not be configured');
    }
    if (typeof value !== 'string') return fail(`env.${name}`, 'must be a string');
    if (value.length > MAX_VALUE_CHARS || value.includes('\0')) {
      return fail(`env.${name}`, `is longer than ${MAX_VALUE_CHARS} characters or contains NUL`);
    }
    envOut.push([name, value]);
  }
  if (cwd !== undefined && (typeof cwd !== 'string' || cwd.includes('\0'))) return fail('cwd', 'must be a string');
  return {
    ok: true,
    entry: { type: 'stdio', command, args: [...(args as string[])], env: envOut, ...(cwd === undefined ? {} : { cwd }) },
  };
}

function checkRemote(raw: Record<string, unknown>, type: 'streamable-http' | 'sse'): EntryCheck {
  const { url, headers = {} } = raw;
  if (typeof url !== 'string' || url.length === 0) return fail('url', 'must be a non-empty string');
  const rule = checkUpstreamUrl(url);
  if (!rule.ok) return fail('url', URL_MESSAGES[rule.code]);
  if (url.includes('#')) return fail('url', 'must not contain a fragment');
  if (!isRecord(headers)) return fail('headers', 'must be an object of strings');
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) return fail('headers', `has more than ${MAX_HEADERS} headers`);
  const seen = new Set<string>();
  const out: [string, string][] = [];
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name) || !isPlainKey(name)) return fail('headers', 'a header name is not a valid HTTP token');
    const lower = name.toLowerCase();
    if (seen.has(lower)) return fail(`headers.${name}`, 'names a header already set under another casing');
    seen.add(lower);
    if (typeof value !== 'string') return fail(`headers.${name}`, 'must be a string');
    if (value.length > MAX_VALUE_CHARS || UNSAFE_HEADER_VALUE.test(value)) {
      return fail(`headers.${name}`, 'value is too long or contains CR, LF or NUL');
    }
    out.push([name, value]);
  }
  return { ok: true, entry: { type, url, headers: out } };
}
