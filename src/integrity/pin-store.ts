/**
 * Where pins live: one `ServerPins` document per upstream server, changed only through `update`,
 * which applies a pure transition (server-pins.ts) atomically. Two kinds: this file's, the
 * default (`<stateDir>/tool-pins.json`, written atomically with mode 0600), and Redis when the
 * gateway is clustered (redis-pin-store.ts), where `update` is a compare-and-set on the
 * document's `rev` and other replicas hear of the change.
 *
 * A file that exists but cannot be understood stops the gateway with a message naming it:
 * starting without it would trust every tool afresh, which is what pins exist to prevent.
 */
import { mkdir, open, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, GatewayError } from '../errors.js';
import { EMPTY_PINS, type ServerPins } from './server-pins.js';

export interface PinStore {
  readonly kind: 'file' | 'redis';
  /** The documents of `servers` (absent ones empty), read at start. */
  load(servers: readonly string[]): Promise<Map<string, ServerPins>>;
  /**
   * Applies `change` to `server`'s current document atomically (retried on a concurrent change);
   * `next` undefined stores nothing. Returns the document now stored and the change's result.
   * Throws `INTEGRITY_STORE_FAILED` when the store cannot be written: nothing was changed then.
   */
  update<T>(server: string, change: (current: ServerPins) => { next: ServerPins | undefined; result: T }): Promise<{ pins: ServerPins; result: T }>;
  /** Documents another replica changed (Redis only); the listener gets the stored document. */
  watch?(listener: (server: string, pins: ServerPins) => void): void;
  close(): Promise<void>;
}

export const PIN_FILE = 'tool-pins.json';
/** Pins are JSON of tool definitions with a per-server bound: anything larger was not written by the gateway. */
const MAX_FILE_BYTES = 256 * 1024 * 1024;

const flag = z.object({ kind: z.string(), where: z.string(), detail: z.string() });
const definition = z.looseObject({ name: z.string() });
/** The shape of a stored document (what server-pins.ts writes). */
export const serverPinsSchema = z.object({
  rev: z.number().int().nonnegative(),
  seen: z.boolean(),
  flooded: z.boolean(),
  tools: z.record(z.string(), z.object({ approved: z.array(z.object({ hash: z.string(), definition, at: z.number() })), rejected: z.array(z.string()) })),
  instructions: z.object({ approved: z.array(z.object({ hash: z.string(), text: z.string().nullable(), at: z.number() })), rejected: z.array(z.string()) }).optional(),
  pending: z.record(
    z.string(),
    z.object({
      id: z.string(),
      server: z.string(),
      tool: z.string().nullable(),
      change: z.enum(['new', 'changed', 'instructions']),
      flags: z.array(flag),
      hash: z.string(),
      after: z.looseObject({}),
      since: z.number(),
    }),
  ),
});

/** Reads a stored document; throws `TypeError` naming what is wrong. */
export function parseServerPins(value: unknown): ServerPins {
  const parsed = serverPinsSchema.safeParse(value);
  if (!parsed.success) throw new TypeError(parsed.error.issues[0]?.message ?? 'not a pin document');
  return { ...parsed.data, instructions: parsed.data.instructions } as unknown as ServerPins;
}

/** Parses the file's text into its documents; throws `TypeError` naming what is wrong. Pure. */
export function parsePinFile(text: string): Map<string, ServerPins> {
  const json: unknown = JSON.parse(text);
  if (typeof json !== 'object' || json === null || (json as { version?: unknown }).version !== 1) throw new TypeError('expected an object with "version": 1');
  const servers = (json as { servers?: unknown }).servers ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) throw new TypeError('"servers" must be an object');
  const out = new Map<string, ServerPins>();
  for (const [server, pins] of Object.entries(servers)) {
    try {
      out.set(server, parseServerPins(pins));
    } catch (error) {
      throw new TypeError(`servers[${JSON.stringify(server)}]: ${(error as Error).message}`);
    }
  }
  return out;
}

async function readIfPresent(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new ConfigError([`stateDir: ${PIN_FILE} cannot be read (${error.code ?? 'error'})`]);
  });
  if (handle === undefined) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_FILE_BYTES) throw new ConfigError([`stateDir: ${PIN_FILE} is not a regular file under ${MAX_FILE_BYTES} bytes`]);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The file store: every server's document in `<stateDir>/tool-pins.json`, written as a temporary
 * file renamed over the old one. Transitions run in order in this process (`update` is atomic:
 * nothing awaits between reading and changing a document); one gateway owns a state directory.
 */
export function createFilePinStore(stateDir: string): PinStore {
  const file = path.join(path.resolve(stateDir), PIN_FILE);
  const documents = new Map<string, ServerPins>();
  let loaded = false;
  let writing: Promise<unknown> = Promise.resolve();
  let sequence = 0;
  let reading: Promise<void> | undefined;

  const flush = async () => {
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.${++sequence}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ version: 1, servers: Object.fromEntries(documents) })}\n`, { mode: 0o600 });
    await rename(temporary, file);
  };

  const readAll = () => (loaded ? Promise.resolve() : (reading ??= readOnce()));
  const readOnce = async () => {
    const text = await readIfPresent(file);
    if (text !== undefined) {
      try {
        for (const [server, pins] of parsePinFile(text)) documents.set(server, pins);
      } catch (error) {
        const reason = error instanceof SyntaxError ? 'it is not valid JSON' : (error as Error).message;
        throw new ConfigError([`stateDir: ${PIN_FILE} holds no usable tool pins (${reason}); fix it, or remove it to pin every tool afresh`]);
      }
    }
    loaded = true;
  };

  // Writes are coalesced: a change waits for the next flush, which writes every change made before
  // it started (one rewrite for a first listing of a hundred servers, not a hundred).
  let flushing: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const scheduleFlush = (): Promise<void> => {
    if (queued !== undefined) return queued;
    const after = flushing ?? Promise.resolve();
    // `then` runs later, so `queued` is set below before the flush it names begins.
    const next = after
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        const run = flush();
        flushing = run;
        return run.finally(() => {
          if (flushing === run) flushing = undefined;
        });
      });
    queued = next;
    return next;
  };

  return {
    kind: 'file',
    async load(servers) {
      await readAll();
      return new Map(servers.map((server) => [server, documents.get(server) ?? EMPTY_PINS]));
    },
    async update(server, change) {
      await readAll();
      const current = documents.get(server) ?? EMPTY_PINS;
      const { next: changed, result } = change(current);
      if (changed === undefined) return { pins: current, result };
      documents.set(server, changed);
      const written = scheduleFlush();
      writing = written.catch(() => undefined);
      try {
        await written;
      } catch (error) {
        // Not on disk, so not decided (unless a later change replaced it meanwhile).
        if (documents.get(server) === changed) documents.set(server, current);
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw new GatewayError('INTEGRITY_STORE_FAILED', `the tool pin store (${PIN_FILE} in stateDir) could not be written (${code}); nothing was changed`, { cause: error, retryAfterMs: 2_000 });
      }
      return { pins: changed, result };
    },
    async close() {
      await writing;
    },
  };
}
