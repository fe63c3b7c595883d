/**
 * `${PLUGIN_ROOT}` / `${PLUGIN_DATA}` expansion (Agent Plugins 1.0 §9.2): one textual pass that
 * replaces every exact occurrence, never rescanning what a replacement introduced, in `args`,
 * `env` values and `cwd` only — never in `command`, `url` or headers. Single-pass matters: a root
 * path that itself contains `${PLUGIN_DATA}` must stay literal, or a directory name could steer
 * where a child writes. Any other `${…}` text stays literal: nothing from the gateway's own
 * environment is ever substituted into a plugin's configuration.
 *
 * Claude Code plugins spell the same two variables `${CLAUDE_PLUGIN_ROOT}` / `${CLAUDE_PLUGIN_DATA}`;
 * in that layout both spellings are recognised and both names are set in the child.
 */
import type { PluginLayout } from './types.js';

export interface PluginPaths {
  /** The resolved plugin root. */
  readonly root: string;
  /** The plugin's data directory. */
  readonly data: string;
}

export interface Placeholders {
  /** Variable names a plugin's `env` may not set: the gateway sets them itself. */
  readonly reserved: readonly string[];
  /** Which of `reserved` mean the root (the rest mean the data directory). */
  readonly rootNames: readonly string[];
}

const STANDARD: Placeholders = { reserved: ['PLUGIN_ROOT', 'PLUGIN_DATA'], rootNames: ['PLUGIN_ROOT'] };
const CLAUDE_CODE: Placeholders = {
  reserved: ['PLUGIN_ROOT', 'PLUGIN_DATA', 'CLAUDE_PLUGIN_ROOT', 'CLAUDE_PLUGIN_DATA'],
  rootNames: ['PLUGIN_ROOT', 'CLAUDE_PLUGIN_ROOT'],
};

/** The placeholders a layout recognises. */
export function placeholdersFor(layout: PluginLayout): Placeholders {
  return layout === 'claude-code' ? CLAUDE_CODE : STANDARD;
}

function valueOf(placeholders: Placeholders, name: string, paths: PluginPaths): string {
  return placeholders.rootNames.includes(name) ? paths.root : paths.data;
}

/** Replaces each `${NAME}` of a reserved name in one pass; everything else is kept verbatim. */
export function expandPlaceholders(value: string, placeholders: Placeholders, paths: PluginPaths): string {
  return value.replace(/\$\{([A-Z_]+)\}/g, (match, name: string) =>
    placeholders.reserved.includes(name) ? valueOf(placeholders, name, paths) : match,
  );
}

/** The variables every plugin child gets, set after (and so over) the plugin's own `env`. */
export function reservedEnv(placeholders: Placeholders, paths: PluginPaths): Record<string, string> {
  return Object.fromEntries(placeholders.reserved.map((name) => [name, valueOf(placeholders, name, paths)]));
}

/**
 * The placeholder a `cwd` starts with, when it is one of the permitted forms: exactly the
 * placeholder or the placeholder followed by `/`.
 */
export function leadingPlaceholder(value: string, placeholders: Placeholders): { name: string; root: boolean } | undefined {
  for (const name of placeholders.reserved) {
    const token = `\${${name}}`;
    if (value === token || value.startsWith(`${token}/`)) return { name, root: placeholders.rootNames.includes(name) };
  }
  return undefined;
}
