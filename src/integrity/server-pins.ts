/**
 * What is pinned for one upstream server, and the pure transitions on it: a listing observed,
 * an admin's approval or rejection. The stores (pin-store.ts, redis-pin-store.ts) keep one such
 * document per server and apply a transition atomically (a compare-and-set on `rev`), so two
 * replicas that see a server's first listing at once pin one first version, never two.
 *
 * A tool may have several approved definitions (a server that tailors a tool per connection:
 * each distinct definition needs its own pin), bounded per tool, oldest dropped. A definition that
 * is neither approved nor rejected is pending, one entry per (server, tool) showing the latest
 * definition seen; an entry's id is stable, so an admin's `hash` says which definition was
 * reviewed. Pending entries are bounded per server: a server that floods new definitions is held
 * whole (`flooded`) until an admin's decisions bring it back under half the bound.
 */
import { createHash } from 'node:crypto';
import type { PinnedDefinition } from './definition.js';
import type { Flag } from './scanner.js';

export type ChangeKind = 'new' | 'changed' | 'instructions';

/** One approved definition of a tool (or instructions text), with when it was approved. */
export interface ApprovedPin {
  readonly hash: string;
  readonly definition: PinnedDefinition;
  readonly at: number;
}

export interface ApprovedInstructions {
  readonly hash: string;
  readonly text: string | null;
  readonly at: number;
}

export interface ToolPins {
  /** Oldest first. */
  readonly approved: readonly ApprovedPin[];
  /** Hashes an admin rejected: hidden until the definition changes again. */
  readonly rejected: readonly string[];
}

export interface PendingEntry {
  readonly id: string;
  readonly server: string;
  /** Null for an `instructions` change. */
  readonly tool: string | null;
  readonly change: ChangeKind;
  readonly flags: readonly Flag[];
  /** The hash of `after`: what an admin reviews and names when deciding. */
  readonly hash: string;
  readonly after: PinnedDefinition | { readonly instructions: string | null };
  readonly since: number;
}

export interface ServerPins {
  /** Bumped by every stored change: the compare-and-set's version. */
  readonly rev: number;
  /** The server's first listing has been observed (trust on first use is spent). */
  readonly seen: boolean;
  /** More pending definitions than the bound: every tool of the server is held. */
  readonly flooded: boolean;
  readonly tools: Readonly<Record<string, ToolPins>>;
  readonly instructions: { readonly approved: readonly ApprovedInstructions[]; readonly rejected: readonly string[] } | undefined;
  readonly pending: Readonly<Record<string, PendingEntry>>;
}

export const EMPTY_PINS: ServerPins = Object.freeze({ rev: 0, seen: false, flooded: false, tools: {}, instructions: undefined, pending: {} });

export interface PinBounds {
  /** Pending entries per server; one more and the server is held whole. */
  readonly maxPending: number;
  /** Approved definitions kept per tool (oldest dropped). */
  readonly maxPinsPerTool: number;
  /** Tools pinned per server; beyond it, new names are pending (and count toward `maxPending`). */
  readonly maxTools: number;
}

export const DEFAULT_BOUNDS: PinBounds = Object.freeze({ maxPending: 200, maxPinsPerTool: 8, maxTools: 2_000 });

/** One definition of a listing, hashed and (when not yet approved) scanned. */
export interface ObservedTool {
  readonly name: string;
  readonly hash: string;
  readonly definition: PinnedDefinition;
  readonly flags: readonly Flag[];
}

export interface Observation {
  readonly tools: readonly ObservedTool[];
  /** Absent: the listing said nothing about instructions (not observed). */
  readonly instructions?: { readonly hash: string; readonly text: string | null; readonly flags: readonly Flag[] };
}

/** What a transition did, for the audit log, metrics and `list_changed` (no description text). */
export type PinEvent =
  | { readonly kind: 'pin'; readonly server: string; readonly tool: string | null; readonly hash: string; readonly by: 'first-use' }
  | { readonly kind: 'change'; readonly server: string; readonly tool: string | null; readonly hash: string; readonly before: string | null; readonly change: ChangeKind; readonly flags: readonly string[] }
  | { readonly kind: 'flood'; readonly server: string; readonly pending: number }
  | { readonly kind: 'approve' | 'reject'; readonly server: string; readonly tool: string | null; readonly hash: string; readonly before: string | null; readonly by: string };

/** The stable id of the pending entry of (server, tool); `tool` null: the server's instructions. */
export function pendingId(server: string, tool: string | null): string {
  return createHash('sha256')
    .update(JSON.stringify([server, tool]))
    .digest('base64url')
    .slice(0, 16);
}

/** The verdict on one definition: shown (`pinned`), or held and why. */
export type Verdict = 'pinned' | 'pending' | 'rejected' | 'flooded';

export function verdictOf(pins: ServerPins, tool: string, hash: string): Verdict {
  if (pins.flooded) return 'flooded';
  const entry = pins.tools[tool];
  if (entry?.approved.some((pin) => pin.hash === hash) === true) return 'pinned';
  if (entry?.rejected.includes(hash) === true) return 'rejected';
  return 'pending';
}

/** Whether `hash` is an approved text of the server's instructions. */
export function instructionsPinned(pins: ServerPins, hash: string): boolean {
  return pins.instructions?.approved.some((pin) => pin.hash === hash) === true;
}

/** The latest approved instructions text; undefined when none was ever approved. */
export function pinnedInstructions(pins: ServerPins): string | null | undefined {
  const approved = pins.instructions?.approved;
  return approved === undefined || approved.length === 0 ? undefined : (approved[approved.length - 1] as ApprovedInstructions).text;
}

function withoutPending(pending: Readonly<Record<string, PendingEntry>>, id: string): Record<string, PendingEntry> {
  const { [id]: _removed, ...rest } = pending;
  return rest;
}

/**
 * The document after `server`'s listing was observed, and what happened; `undefined` document
 * when nothing changed. The first observation pins every unflagged definition when
 * `trustOnFirstUse`, and makes everything else pending.
 */
export function observe(pins: ServerPins, server: string, observation: Observation, options: { trustOnFirstUse: boolean; bounds: PinBounds; now: number }): { next: ServerPins | undefined; events: PinEvent[] } {
  const events: PinEvent[] = [];
  const tools: Record<string, ToolPins> = { ...pins.tools };
  let pending: Record<string, PendingEntry> = { ...pins.pending };
  let instructions = pins.instructions;
  let flooded = pins.flooded;
  let changed = !pins.seen;
  const first = !pins.seen;
  const { bounds } = options;

  const hold = (entry: PendingEntry, before: string | null) => {
    const current = pending[entry.id];
    if (current?.hash === entry.hash) return;
    if (current === undefined && Object.keys(pending).length >= bounds.maxPending) {
      // Held whole: the definition is not stored (the bound holds), the flood is reported once.
      if (!flooded) {
        flooded = true;
        changed = true;
        events.push({ kind: 'flood', server, pending: Object.keys(pending).length + 1 });
      }
      return;
    }
    pending[entry.id] = entry;
    changed = true;
    events.push({ kind: 'change', server, tool: entry.tool, hash: entry.hash, before, change: entry.change, flags: entry.flags.map((f) => f.kind) });
  };

  for (const tool of observation.tools) {
    const entry = tools[tool.name];
    if (entry?.approved.some((pin) => pin.hash === tool.hash) === true) continue;
    if (entry?.rejected.includes(tool.hash) === true) continue;
    const trusted = first && options.trustOnFirstUse && tool.flags.length === 0 && Object.keys(tools).length < bounds.maxTools;
    if (trusted) {
      const approved = [...(entry?.approved ?? []), { hash: tool.hash, definition: tool.definition, at: options.now }].slice(-bounds.maxPinsPerTool);
      tools[tool.name] = { approved, rejected: entry?.rejected ?? [] };
      pending = withoutPending(pending, pendingId(server, tool.name));
      changed = true;
      events.push({ kind: 'pin', server, tool: tool.name, hash: tool.hash, by: 'first-use' });
      continue;
    }
    const before = entry?.approved[entry.approved.length - 1]?.hash ?? null;
    hold(
      { id: pendingId(server, tool.name), server, tool: tool.name, change: before === null ? 'new' : 'changed', flags: tool.flags, hash: tool.hash, after: tool.definition, since: options.now },
      before,
    );
  }

  const said = observation.instructions;
  if (said !== undefined && !instructionsPinned(pins, said.hash) && !(pins.instructions?.rejected.includes(said.hash) ?? false)) {
    if (first && options.trustOnFirstUse && said.flags.length === 0) {
      instructions = { approved: [{ hash: said.hash, text: said.text, at: options.now }], rejected: pins.instructions?.rejected ?? [] };
      changed = true;
      events.push({ kind: 'pin', server, tool: null, hash: said.hash, by: 'first-use' });
    } else {
      const before = pins.instructions?.approved[pins.instructions.approved.length - 1]?.hash ?? null;
      hold({ id: pendingId(server, null), server, tool: null, change: 'instructions', flags: said.flags, hash: said.hash, after: { instructions: said.text }, since: options.now }, before);
    }
  }

  if (!changed) return { next: undefined, events };
  return { next: { rev: pins.rev + 1, seen: true, flooded, tools, instructions, pending }, events };
}

/** Why a decision could not be applied. */
export type DecisionProblem = { readonly kind: 'unknown'; readonly id: string } | { readonly kind: 'stale'; readonly id: string; readonly hash: string };

/**
 * The document after an admin approved or rejected pending entry `id` (having reviewed `hash`, when
 * given). Approval pins the pending definition; rejection remembers its hash so it stays hidden
 * until the definition changes again. A flooded server is released once its pending entries are
 * under half the bound.
 */
export function decide(
  pins: ServerPins,
  id: string,
  decision: 'approve' | 'reject',
  options: { hash?: string | undefined; by: string; now: number; bounds: PinBounds },
): { next: ServerPins; event: PinEvent } | DecisionProblem {
  const entry = pins.pending[id];
  if (entry === undefined) return { kind: 'unknown', id };
  if (options.hash !== undefined && options.hash !== entry.hash) return { kind: 'stale', id, hash: entry.hash };
  const pending = withoutPending(pins.pending, id);
  const flooded = pins.flooded && Object.keys(pending).length >= options.bounds.maxPending / 2;
  let tools = pins.tools;
  let instructions = pins.instructions;
  let before: string | null;
  if (entry.tool === null) {
    const current = pins.instructions ?? { approved: [], rejected: [] };
    before = current.approved[current.approved.length - 1]?.hash ?? null;
    const text = (entry.after as { instructions: string | null }).instructions;
    instructions =
      decision === 'approve'
        ? { approved: [...current.approved, { hash: entry.hash, text, at: options.now }].slice(-options.bounds.maxPinsPerTool), rejected: current.rejected.filter((h) => h !== entry.hash) }
        : { approved: current.approved, rejected: [...current.rejected, entry.hash].slice(-options.bounds.maxPinsPerTool) };
  } else {
    const current = pins.tools[entry.tool] ?? { approved: [], rejected: [] };
    before = current.approved[current.approved.length - 1]?.hash ?? null;
    const next: ToolPins =
      decision === 'approve'
        ? {
            approved: [...current.approved, { hash: entry.hash, definition: entry.after as PinnedDefinition, at: options.now }].slice(-options.bounds.maxPinsPerTool),
            rejected: current.rejected.filter((h) => h !== entry.hash),
          }
        : { approved: current.approved, rejected: [...current.rejected, entry.hash].slice(-options.bounds.maxPinsPerTool) };
    tools = { ...pins.tools, [entry.tool]: next };
  }
  return {
    next: { rev: pins.rev + 1, seen: pins.seen, flooded, tools, instructions, pending },
    event: { kind: decision, server: entry.server, tool: entry.tool, hash: entry.hash, before, by: options.by },
  };
}
