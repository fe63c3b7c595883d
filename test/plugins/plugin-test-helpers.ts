/**
 * Shared by the plugin tests: where the fixture plugins are, throw-away state directories, and
 * plugins built on the fly in a temporary directory (for layouts a checked-in fixture cannot
 * hold, such as FIFOs, symlinks to absolute paths or directory names with placeholders in them).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import type { TextRange } from '../../src/plugins/types.js';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'plugins');

export function fixture(name: string): string {
  return path.join(FIXTURES, name);
}

/** The manifest `$schema` lines of Agent Plugins 1.0. */
export const AP_PLUGIN_SCHEMA = 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json';
export const AP_MCP_SCHEMA = 'https://agent-plugins.org/schemas/1.0.0/mcp.schema.json';

const created: string[] = [];
afterAll(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(prefix = 'portcullis-plugins-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export type FileSpec = string | { symlink: string } | { executable: string };

/** Writes `files` (relative path → content, symlink target or executable content) under `dir`. */
export function writeTree(dir: string, files: Record<string, FileSpec>): string {
  for (const [relative, spec] of Object.entries(files)) {
    const target = path.join(dir, relative);
    mkdirSync(path.dirname(target), { recursive: true });
    if (typeof spec === 'string') writeFileSync(target, spec);
    else if ('symlink' in spec) symlinkSync(spec.symlink, target);
    else {
      writeFileSync(target, spec.executable);
      chmodSync(target, 0o755);
    }
  }
  return dir;
}

/** An Agent Plugins 1.0 plugin named `name` whose `mcp.json` holds `servers`. */
export function agentPlugin(dir: string, name: string, servers: Record<string, unknown>, extra: Record<string, FileSpec> = {}): string {
  return writeTree(dir, {
    'plugin.json': JSON.stringify({ $schema: AP_PLUGIN_SCHEMA, name }, null, 2),
    'mcp.json': JSON.stringify({ $schema: AP_MCP_SCHEMA, mcpServers: servers }, null, 2),
    ...extra,
  });
}

/** An independent reading of a range: walk the text line by line, as an editor would. */
export function sliceByRange(text: string, range: TextRange): string {
  const lines: { start: number }[] = [];
  let start = 0;
  for (const match of text.matchAll(/\r\n|\n|\r/g)) {
    lines.push({ start });
    start = (match.index as number) + match[0].length;
  }
  lines.push({ start });
  const offset = (p: { line: number; character: number }) => (lines[p.line] as { start: number }).start + p.character;
  return text.slice(offset(range.start), offset(range.end));
}

