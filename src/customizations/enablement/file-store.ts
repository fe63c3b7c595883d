/**
 * The default state store: `<stateDir>/enablement.json`,
 * `{ "version": 1, "global": { key: bool }, "workspaces": { uri: { key: bool } } }`. Writes are
 * serialised and atomic (a temporary file renamed over the old one), so a crash mid-write leaves
 * the previous decisions, never half a file. A file that exists but cannot be understood stops
 * the gateway with a message naming it: starting without it would silently re-enable servers an
 * operator disabled.
 */
import { mkdir, open, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, GatewayError } from '../../errors.js';
import type { StoredDecisions } from './decisions.js';
import { DecisionTable, MAX_STORED_WORKSPACES, type EnablementStore, type StoredScope } from './store.js';

export const STATE_FILE = 'enablement.json';
/** The file holds booleans under known keys: anything this large was not written by the gateway. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function booleans(value: unknown, where: string, into: Map<string, boolean>): void {
  if (!isObject(value)) throw new TypeError(`${where} must be an object of booleans`);
  for (const [key, decided] of Object.entries(value)) {
    if (typeof decided !== 'boolean') throw new TypeError(`${where}[${JSON.stringify(key)}] must be a boolean`);
    into.set(key, decided);
  }
}

/** Parses the file's text; throws `TypeError` naming what is wrong. Pure. */
export function parseStateFile(text: string): DecisionTable {
  const table = new DecisionTable();
  const json: unknown = JSON.parse(text);
  if (!isObject(json) || json.version !== 1) throw new TypeError('expected an object with "version": 1');
  booleans(json.global ?? {}, 'global', table.global);
  const workspaces = json.workspaces ?? {};
  if (!isObject(workspaces)) throw new TypeError('workspaces must be an object');
  const entries = Object.entries(workspaces);
  if (entries.length > MAX_STORED_WORKSPACES) throw new TypeError(`more than ${MAX_STORED_WORKSPACES} workspaces`);
  for (const [workspace, decisions] of entries) {
    const into = new Map<string, boolean>();
    booleans(decisions, `workspaces[${JSON.stringify(workspace)}]`, into);
    if (into.size > 0) table.workspaces.set(workspace, into);
  }
  return table;
}

export function serialiseStateFile(decisions: StoredDecisions): string {
  // Workspace URIs are the callers' (any string): own properties, so `__proto__` is saved too.
  const workspaces = Object.fromEntries([...decisions.workspaces].map(([workspace, table]) => [workspace, Object.fromEntries(table)]));
  return `${JSON.stringify({ version: 1, global: Object.fromEntries(decisions.global), workspaces }, null, 2)}\n`;
}

async function readIfPresent(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new ConfigError([`stateDir: ${STATE_FILE} cannot be read (${error.code ?? 'error'})`]);
  });
  if (handle === undefined) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_FILE_BYTES) throw new ConfigError([`stateDir: ${STATE_FILE} is not a regular file under ${MAX_FILE_BYTES} bytes`]);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

export function createFileStore(stateDir: string): EnablementStore {
  const file = path.join(path.resolve(stateDir), STATE_FILE);
  const table = new DecisionTable();
  let writing: Promise<void> = Promise.resolve();
  let sequence = 0;

  const flush = async () => {
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.${++sequence}.tmp`;
    await writeFile(temporary, serialiseStateFile(table), { mode: 0o600 });
    await rename(temporary, file);
  };

  return {
    kind: 'file',
    async load() {
      const text = await readIfPresent(file);
      if (text === undefined) return table;
      let parsed: DecisionTable;
      try {
        parsed = parseStateFile(text);
      } catch (error) {
        const reason = error instanceof SyntaxError ? 'it is not valid JSON' : (error as Error).message;
        throw new ConfigError([`stateDir: ${STATE_FILE} holds no usable enablement decisions (${reason}); fix or remove it`]);
      }
      for (const [key, value] of parsed.global) table.global.set(key, value);
      for (const [workspace, decisions] of parsed.workspaces) table.workspaces.set(workspace, decisions);
      return table;
    },
    write(where: StoredScope, key: string, value: boolean | undefined) {
      const before = where.scope === 'global' ? table.global.get(key) : table.workspaces.get(where.workspace)?.get(key);
      table.apply(where, key, value);
      const next = writing.then(flush).catch((error: unknown) => {
        // Not on disk, so not decided: the table goes back to what the file holds.
        table.apply(where, key, before);
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw new GatewayError('ENABLEMENT_STORE_FAILED', `the enablement store (${STATE_FILE} in stateDir) could not be written (${code}); nothing was changed`, { cause: error, retryAfterMs: 2_000 });
      });
      writing = next.catch(() => undefined);
      return next;
    },
    async close() {
      await writing;
    },
  };
}
