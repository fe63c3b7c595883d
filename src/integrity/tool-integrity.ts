/**
 * Tool integrity at the one place tools are merged (catalogue/catalogue.ts): every configured
 * server's listing is judged against its pins before names are assigned, so a held tool is absent
 * from `tools/list`, from `search_tools` and from every view built on the catalogue (side
 * channels, agents, sessions' own and pooled connections), and a call to it is refused with
 * `TOOL_PENDING_APPROVAL` (docs/security.md, "Tool integrity").
 *
 * Modes: `off` judges nothing; `warn` pins, records changes as pending, logs, audits and counts,
 * and hides nothing; `hold` also hides every definition that is not pinned (new, changed,
 * flagged, rejected, or of a flooding server) and serves a server's pinned instructions until a
 * change of them is approved. Definitions are hashed once per tool object (a link's cached list
 * keeps its objects), scanned only when not yet pinned, and written only when something is new:
 * a warm listing costs a few map lookups per tool. When the store cannot be written, nothing new
 * is pinned — under `hold` that holds the new definitions (fails closed) and says so in the log.
 *
 * Servers a client brings in its own `initialize` are not pinned here: they are that client's.
 */
import type { Logger } from '../observability/logger.js';
import { GatewayError } from '../errors.js';
import { definitionHash, instructionsHash, pinnedDefinition, type PinnedDefinition } from './definition.js';
import type { PinStore } from './pin-store.js';
import { compileScanCatalogue, scanTool, type CompiledScanCatalogue, type Flag } from './scanner.js';
import {
  decide,
  DEFAULT_BOUNDS,
  EMPTY_PINS,
  instructionsPinned,
  observe,
  pendingId,
  pinnedInstructions,
  verdictOf,
  type ChangeKind,
  type ObservedTool,
  type PendingEntry,
  type PinBounds,
  type PinEvent,
  type ServerPins,
  type Verdict,
} from './server-pins.js';

export type IntegrityMode = 'off' | 'warn' | 'hold';

export const INTEGRITY_MODES: readonly IntegrityMode[] = ['off', 'warn', 'hold'];

/** The stricter of two modes. */
export function stricterMode(a: IntegrityMode, b: IntegrityMode): IntegrityMode {
  return INTEGRITY_MODES.indexOf(a) >= INTEGRITY_MODES.indexOf(b) ? a : b;
}

export interface ToolIntegrityOptions {
  readonly mode: IntegrityMode;
  /** The first listing of a server pins its unflagged definitions; false: everything waits for approval. */
  readonly trustOnFirstUse: boolean;
  readonly store: PinStore;
  /** The configured servers at start (their pins are read then). */
  readonly servers: readonly string[];
  /** Whether a server is the gateway's own (config, plugins, reloads): only those are judged; default: `servers`. */
  readonly isServer?: (server: string) => boolean;
  /** The separator of namespaced names, for the cross-server checks. */
  readonly separator: string | null;
  readonly logger: Logger;
  /**
   * Every server's tool names as the gateway knows them (its primary connections' lists), for the
   * cross-server checks: a view of one server (a side channel) is still judged against all of
   * them. Asked only when a definition needs scanning. Absent: the names in the listing judged.
   */
  readonly allNames?: () => Promise<ReadonlyMap<string, readonly string[]>>;
  /** One call per pin, change, flood, approval and rejection (the audit line and the metrics). */
  readonly onEvent?: (event: PinEvent) => void;
  readonly bounds?: PinBounds;
  readonly now?: () => number;
}

/** A listing as the catalogue hands it over: a server's raw tools (and its instructions, when known). */
export interface ListedServer {
  readonly server: string;
  readonly items: readonly unknown[];
  readonly instructions?: string | undefined;
}

/** What the catalogue needs back: which of a server's tools are held, and why. */
export interface Holds {
  /** Undefined: shown. */
  held(server: string, name: string): Verdict | undefined;
}

/** A pending entry as the approvals API shows it (`before`: the latest pinned definition, or null). */
export interface PendingView {
  readonly id: string;
  readonly server: string;
  readonly tool: string | null;
  readonly change: ChangeKind;
  readonly flags: readonly Flag[];
  readonly hash: string;
  readonly before: PinnedDefinition | { readonly instructions: string | null } | null;
  readonly after: PendingEntry['after'];
  readonly since: string;
}

export interface HeldServer {
  readonly server: string;
  readonly reason: 'flooded';
}

const NOTHING_HELD: Holds = { held: () => undefined };

interface Hashed {
  readonly hash: string;
  readonly definition: PinnedDefinition;
}

export class ToolIntegrity {
  readonly mode: IntegrityMode;
  private readonly options: ToolIntegrityOptions;
  private readonly bounds: PinBounds;
  private readonly servers: ReadonlySet<string>;
  private readonly isServer: (server: string) => boolean;
  private readonly docs = new Map<string, ServerPins>();
  private readonly hashes = new WeakMap<object, Hashed>();
  private readonly listeners = new Set<(server: string) => void>();
  /** One write per server at a time. */
  private readonly inflight = new Map<string, Promise<void>>();
  /** Judgements under way, by server and listing: concurrent views of one listing share one. */
  private readonly judging = new Map<string, Promise<void>>();
  /** The last scan catalogue compiled, by the names it was compiled from. */
  private scanMemo: { key: string; compiled: CompiledScanCatalogue } | undefined;
  private failing = false;
  private changes = 0;

  private constructor(options: ToolIntegrityOptions, docs: Map<string, ServerPins>) {
    this.options = options;
    this.mode = options.mode;
    this.bounds = options.bounds ?? DEFAULT_BOUNDS;
    this.servers = new Set(options.servers);
    this.isServer = options.isServer ?? ((server) => this.servers.has(server));
    for (const [server, pins] of docs) this.docs.set(server, pins);
    options.store.watch?.((server, pins) => this.replace(server, pins));
  }

  /** Reads the store (start fails with its error when it cannot be read). */
  static async open(options: ToolIntegrityOptions): Promise<ToolIntegrity> {
    const docs = options.mode === 'off' ? new Map<string, ServerPins>() : await options.store.load(options.servers);
    return new ToolIntegrity(options, docs);
  }

  /** Changes with every stored change: part of the catalogue's memo key. */
  get version(): number {
    return this.changes;
  }

  /** Hears a server whose held tools changed (to announce `list_changed`); returns the unsubscribe. */
  onChange(listener: (server: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Judges a merged listing: records what is new (pins on first use, pending entries) and returns
   * which tools are held. Under `off`, and for servers a client brought, nothing is held.
   */
  async judge(lists: readonly ListedServer[]): Promise<Holds> {
    if (this.mode === 'off') return NOTHING_HELD;
    const judged = lists.filter((list) => this.isServer(list.server));
    if (judged.length === 0) return NOTHING_HELD;
    const hashed = new Map<string, Map<string, Hashed>>();
    let scan: Promise<CompiledScanCatalogue> | undefined;
    const scanCatalogue = () => (scan ??= this.scanContext(lists));
    const writes: Array<Promise<void>> = [];
    for (const list of judged) {
      const byName = new Map<string, Hashed>();
      hashed.set(list.server, byName);
      for (const item of list.items) {
        const found = this.hashOf(item);
        if (found !== undefined && !byName.has(found.definition.name)) byName.set(found.definition.name, found);
      }
      const pins = this.docs.get(list.server) ?? EMPTY_PINS;
      const instructions = list.instructions === undefined ? undefined : { text: list.instructions, hash: instructionsHash(list.instructions) };
      if (this.known(pins, list.server, byName, instructions?.hash)) continue;
      // Many views list the same server at once (every endpoint's catalogue, at start): one
      // judgement of one listing is shared by all of them.
      const key = `${list.server}\n${[...byName.values()].map((h) => h.hash).join(',')}\n${instructions?.hash ?? ''}`;
      let judging = this.judging.get(key);
      if (judging === undefined) {
        judging = (async () => {
          const tools: ObservedTool[] = [];
          for (const { hash, definition } of byName.values()) {
            const unpinned = verdictOf({ ...pins, flooded: false }, definition.name, hash) === 'pending';
            tools.push({ name: definition.name, hash, definition, flags: unpinned ? scanTool(definition, list.server, await scanCatalogue()) : [] });
          }
          const said =
            instructions === undefined
              ? undefined
              : { hash: instructions.hash, text: instructions.text, flags: instructionsPinned(pins, instructions.hash) ? [] : scanTool({ name: '', description: instructions.text }, list.server, await scanCatalogue()) };
          await this.record(list.server, { tools, ...(said === undefined ? {} : { instructions: said }) });
        })().finally(() => this.judging.delete(key));
        this.judging.set(key, judging);
      }
      writes.push(judging);
    }
    // Under `warn` nothing is hidden, so nothing waits: the judgement (scan, pins, log) runs on
    // after the listing is answered. Under `hold` the listing waits for it: it decides what shows.
    if (this.mode === 'warn') return NOTHING_HELD;
    await Promise.all(writes);
    return {
      held: (server, name) => {
        const found = hashed.get(server)?.get(name);
        if (found === undefined) return undefined;
        const verdict = verdictOf(this.docs.get(server) ?? EMPTY_PINS, name, found.hash);
        return verdict === 'pinned' ? undefined : verdict;
      },
    };
  }

  /**
   * The instructions a client is shown for `server`: the upstream's own when pinned (or when not
   * holding); under `hold`, the pinned text while a change of them waits for approval.
   */
  servedInstructions(server: string, current: string | undefined): string | undefined {
    if (this.mode !== 'hold' || !this.isServer(server)) return current;
    const pins = this.docs.get(server) ?? EMPTY_PINS;
    if (current !== undefined && instructionsPinned(pins, instructionsHash(current))) return current;
    if (current === undefined && (pins.instructions === undefined || instructionsPinned(pins, instructionsHash(undefined)))) return undefined;
    return pinnedInstructions(pins) ?? undefined;
  }

  /** Every pending entry, oldest first, with the definition pinned before it. */
  pending(): PendingView[] {
    const out: PendingView[] = [];
    for (const [server, pins] of this.docs) {
      for (const entry of Object.values(pins.pending)) {
        let before: PendingView['before'] = null;
        if (entry.tool === null) {
          const approved = pins.instructions?.approved;
          const last = approved?.[approved.length - 1];
          before = last === undefined ? null : { instructions: last.text };
        } else {
          const approved = pins.tools[entry.tool]?.approved;
          before = approved?.[approved.length - 1]?.definition ?? null;
        }
        out.push({ id: entry.id, server, tool: entry.tool, change: entry.change, flags: entry.flags, hash: entry.hash, before, after: entry.after, since: new Date(entry.since).toISOString() });
      }
    }
    return out.sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : a.id < b.id ? -1 : 1));
  }

  /** Servers held whole (more pending definitions than the bound). */
  heldServers(): HeldServer[] {
    return [...this.docs].filter(([, pins]) => pins.flooded).map(([server]) => ({ server, reason: 'flooded' as const }));
  }

  /** Pending entries per server (for the metrics gauge). */
  pendingCounts(): Map<string, number> {
    const servers = new Set([...this.servers, ...this.docs.keys()]);
    return new Map([...servers].filter(this.isServer).map((server) => [server, Object.keys(this.docs.get(server)?.pending ?? {}).length]));
  }

  /**
   * Applies an admin's decision to pending entry `id`. Throws `NOT_FOUND` for an id that is not
   * pending, `INTEGRITY_CONFLICT` when `hash` is no longer the pending definition's, and
   * `INTEGRITY_STORE_FAILED` when it could not be stored (nothing decided).
   */
  async decide(id: string, decision: 'approve' | 'reject', options: { hash?: string | undefined; by: string }): Promise<void> {
    const server = [...this.docs].find(([, pins]) => pins.pending[id] !== undefined)?.[0];
    if (server === undefined) throw new GatewayError('NOT_FOUND', `no pending tool change has id "${id}"`);
    const { pins, result } = await this.options.store.update<ReturnType<typeof decide>>(server, (current) => {
      const outcome = decide(current, id, decision, { hash: options.hash, by: options.by, now: this.now(), bounds: this.bounds });
      return { next: 'next' in outcome ? outcome.next : undefined, result: outcome };
    });
    this.replace(server, pins);
    if (!('next' in result)) {
      if (result.kind === 'unknown') throw new GatewayError('NOT_FOUND', `no pending tool change has id "${id}"`);
      throw new GatewayError('INTEGRITY_CONFLICT', `the pending definition changed since it was reviewed (now ${result.hash}); review it again`, {
        server,
        data: { id, hash: result.hash },
      });
    }
    this.emit(result.event);
  }

  /** The pending entry `id` as the API shows it, if pending. */
  pendingEntry(id: string): PendingView | undefined {
    return this.pending().find((entry) => entry.id === id);
  }

  /** The catalogue definitions are scanned against: every server the gateway knows, the listing's own lists first. */
  private async scanContext(lists: readonly ListedServer[]): Promise<CompiledScanCatalogue> {
    const servers = new Map<string, readonly string[]>();
    const namesIn = (items: readonly unknown[]) => items.map((item) => (item as { name?: unknown }).name).filter((name): name is string => typeof name === 'string');
    for (const list of lists) servers.set(list.server, namesIn(list.items));
    try {
      for (const [server, names] of (await this.options.allNames?.()) ?? []) if (!servers.has(server) || servers.get(server)?.length === 0) servers.set(server, names);
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'tool integrity: other servers\' tools could not be read; scanning against this listing alone');
    }
    for (const server of this.servers) if (!servers.has(server)) servers.set(server, []);
    // Compiling is the costly part (a skeleton per name): the same names compile once.
    const key = [...servers].map(([server, names]) => `${server}\u0000${names.join('\u0000')}`).sort().join('\u0001');
    if (this.scanMemo?.key === key) return this.scanMemo.compiled;
    const compiled = compileScanCatalogue({ separator: this.options.separator, servers });
    this.scanMemo = { key, compiled };
    return compiled;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private hashOf(item: unknown): Hashed | undefined {
    if (typeof item !== 'object' || item === null || typeof (item as { name?: unknown }).name !== 'string') return undefined;
    let found = this.hashes.get(item);
    if (found === undefined) {
      const definition = pinnedDefinition(item as { name: string });
      found = { hash: definitionHash(definition), definition };
      this.hashes.set(item, found);
    }
    return found;
  }

  /** Whether the listing holds nothing the document does not already know (no write needed). */
  private known(pins: ServerPins, server: string, byName: ReadonlyMap<string, Hashed>, instructions: string | undefined): boolean {
    if (!pins.seen) return false;
    for (const [name, { hash }] of byName) {
      if (verdictOf({ ...pins, flooded: false }, name, hash) !== 'pending') continue;
      if (pins.pending[pendingId(server, name)]?.hash === hash) continue;
      // A flooded server stores nothing more until decisions bring it under the bound.
      if (pins.flooded) continue;
      return false;
    }
    if (instructions !== undefined && !instructionsPinned(pins, instructions) && pins.instructions?.rejected.includes(instructions) !== true) {
      if (pins.pending[pendingId(server, null)]?.hash !== instructions && !pins.flooded) return false;
    }
    return true;
  }

  private record(server: string, observation: Parameters<typeof observe>[2]): Promise<void> {
    const previous = this.inflight.get(server) ?? Promise.resolve();
    const next = previous.then(async () => {
      try {
        const { pins, result } = await this.options.store.update(server, (current) => {
          const outcome = observe(current, server, observation, { trustOnFirstUse: this.options.trustOnFirstUse, bounds: this.bounds, now: this.now() });
          return { next: outcome.next, result: outcome.events };
        });
        if (this.failing) this.options.logger.info('tool pins: the store is writable again');
        this.failing = false;
        this.replace(server, pins);
        for (const event of result) this.emit(event);
      } catch (error) {
        if (!this.failing) {
          this.options.logger.error(
            { server, code: error instanceof GatewayError ? error.code : 'error' },
            `tool pins could not be stored; nothing new is pinned${this.mode === 'hold' ? ' and new definitions stay held' : ''} until the store answers`,
          );
        }
        this.failing = true;
      }
    });
    const settled = next.finally(() => {
      if (this.inflight.get(server) === settled) this.inflight.delete(server);
    });
    this.inflight.set(server, settled);
    return settled;
  }

  /** Takes a stored document (this replica's write or another's) and tells listeners when what is held changed. */
  private replace(server: string, pins: ServerPins): void {
    // `rev` grows with every stored change: an equal one is the document already held (this
    // replica's own write heard back), a lower one is older news.
    const before = this.docs.get(server);
    if (before !== undefined && pins.rev <= before.rev) return;
    this.docs.set(server, pins);
    this.changes++;
    for (const listener of this.listeners) {
      try {
        listener(server);
      } catch {
        // One listener's failure does not keep the change from the others.
      }
    }
  }

  private emit(event: PinEvent): void {
    const { logger } = this.options;
    // Names and hashes only: a description's text is the attacker's, and can be long.
    if (event.kind === 'change') logger.warn({ server: event.server, tool: event.tool, change: event.change, hash: event.hash, flags: event.flags }, 'tool integrity: a definition is not the pinned one');
    else if (event.kind === 'flood') logger.error({ server: event.server, pending: event.pending }, 'tool integrity: a server lists more new definitions than the bound; every tool of it is held');
    else logger.info({ server: event.server, tool: event.tool, hash: event.hash, event: event.kind }, `tool integrity: ${event.kind}`);
    this.options.onEvent?.(event);
  }
}
