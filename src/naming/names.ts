/**
 * Exposed names for tools and prompts: namespacing, sanitising, shortening and collision
 * resolution. Pure and deterministic: the same upstream catalogues always give the same names,
 * whatever order the upstreams answered in (DESIGN.md §6: never last-writer-wins).
 *
 * Name rules. MCP 2025-11-25 (server/tools, "Tool names", from SEP-986) says a tool name SHOULD be
 * 1–128 characters of `A-Z a-z 0-9 _ - .`, case-sensitive; the SDK's `validateToolName` checks
 * exactly that. Several clients and model APIs reject names over 64 characters, so the gateway
 * exposes at most {@link MAX_NAME_LENGTH}. (Some model APIs also reject `.`; names keep it, as
 * the spec allows it.)
 *
 * An exposed name cannot be parsed back into server and tool (shortening and hash suffixes lose
 * information, and a separator may occur inside names): route with the index from
 * {@link assignNames}, never by splitting a name.
 */
import { createHash } from 'node:crypto';

/** The longest name the gateway exposes; see the module comment for why 64, not 128. */
export const MAX_NAME_LENGTH = 64;

/** Hex characters of the sha256 suffix used for shortening and collision renames. */
const HASH_LENGTH = 8;
/** `_` + hash. */
const SUFFIX_LENGTH = HASH_LENGTH + 1;
/** Bound on rename attempts for one name; exhausting it needs repeated 32-bit hash collisions. */
const MAX_RENAME_ATTEMPTS = 1000;

const DISALLOWED = /[^A-Za-z0-9_.-]/gu;

/** A tool or prompt as its upstream names it. */
export interface UpstreamName {
  readonly server: string;
  readonly name: string;
}

/** A name that lost a collision and was given another. */
export interface RenamedName extends UpstreamName {
  readonly exposed: string;
}

/** Several upstream names wanted the same exposed name; `kept` has it, `renamed` got others. */
export interface NameCollision {
  readonly exposed: string;
  readonly kept: UpstreamName;
  readonly renamed: readonly RenamedName[];
}

export interface NameAssignment {
  /** Exposed name → upstream name, in (server, name) order. The routing index. */
  readonly byExposed: ReadonlyMap<string, UpstreamName>;
  /** Upstream name → exposed name; `undefined` for a name that was not assigned. */
  exposedFor(server: string, name: string): string | undefined;
  /** Every collision, for the caller to log; empty when all names were distinct. */
  readonly collisions: readonly NameCollision[];
}

export interface AssignNamesOptions {
  /** Longest exposed name; defaults to {@link MAX_NAME_LENGTH}. */
  readonly maxLength?: number;
}

/** `<server><separator><name>`, or `name` alone when the separator is `null` (no namespacing). */
export function namespacedName(server: string, name: string, separator: string | null): string {
  return separator === null ? name : `${server}${separator}${name}`;
}

/**
 * Replaces every character outside `A-Z a-z 0-9 _ - .` with `_`, one `_` per code point, and an
 * empty name with `_`. Different names can sanitise to the same string (`a b`, `a/b` → `a_b`):
 * {@link assignNames} resolves those like any other collision.
 */
export function sanitizeName(name: string): string {
  return name.length === 0 ? '_' : name.replace(DISALLOWED, '_');
}

/** The first 8 hex characters of sha256(input): stable across processes and versions. */
export function nameHash(input: string): string {
  return createHash('sha256').update(input, 'utf8').digest('hex').slice(0, HASH_LENGTH);
}

/**
 * Sanitises `full` and, when the result is longer than `max`, keeps a readable prefix and appends
 * `_` + {@link nameHash} of the original `full`, so the result is exactly `max` characters.
 * Deterministic; names that fit are only sanitised. Throws `TypeError` when `max` leaves no room
 * for a one-character prefix and the suffix.
 */
export function shortenName(full: string, max: number = MAX_NAME_LENGTH): string {
  assertMaxLength(max);
  const sanitized = sanitizeName(full);
  if (sanitized.length <= max) return sanitized;
  return withSuffix(sanitized, nameHash(full), max);
}

/**
 * Gives every (server, name) an exposed name that is unique, valid and at most `maxLength` long.
 *
 * Deterministic regardless of input order: entries are sorted by (server, name) in code-unit
 * order; each wants `shortenName(namespacedName(server, name, separator))`. Pass one gives each
 * wanted name to its first claimant. Pass two renames every later claimant to its wanted name's
 * prefix + `_` + a hash of server and name (salted with a counter until unique), so a rename can
 * never take a name that some entry wanted for itself in pass one. Repeated entries are the same
 * entry. Note that a newly added server can sort before an existing one and take a contested
 * name; collisions are reported so the operator can rename the tool or change the separator.
 */
export function assignNames(
  entries: readonly UpstreamName[],
  separator: string | null,
  options: AssignNamesOptions = {},
): NameAssignment {
  const max = options.maxLength ?? MAX_NAME_LENGTH;
  assertMaxLength(max);
  const sorted = uniqueSorted(entries);

  const taken = new Map<string, UpstreamName>();
  const losers: Array<{ entry: UpstreamName; wanted: string }> = [];
  for (const entry of sorted) {
    const wanted = shortenName(namespacedName(entry.server, entry.name, separator), max);
    if (taken.has(wanted)) losers.push({ entry, wanted });
    else taken.set(wanted, entry);
  }

  const exposedByEntry = new Map<UpstreamName, string>();
  for (const [exposed, entry] of taken) exposedByEntry.set(entry, exposed);

  const collisionByWanted = new Map<string, { kept: UpstreamName; renamed: RenamedName[] }>();
  for (const { entry, wanted } of losers) {
    const exposed = renameUntilFree(entry, wanted, taken, max);
    taken.set(exposed, entry);
    exposedByEntry.set(entry, exposed);
    let collision = collisionByWanted.get(wanted);
    if (collision === undefined) {
      const kept = taken.get(wanted) as UpstreamName;
      collision = { kept: { server: kept.server, name: kept.name }, renamed: [] };
      collisionByWanted.set(wanted, collision);
    }
    collision.renamed.push({ server: entry.server, name: entry.name, exposed });
  }

  const byExposed = new Map<string, UpstreamName>();
  const byServer = new Map<string, Map<string, string>>();
  for (const entry of sorted) {
    const exposed = exposedByEntry.get(entry) as string;
    byExposed.set(exposed, { server: entry.server, name: entry.name });
    let names = byServer.get(entry.server);
    if (names === undefined) {
      names = new Map();
      byServer.set(entry.server, names);
    }
    names.set(entry.name, exposed);
  }

  const collisions = [...collisionByWanted].map(([exposed, c]) => ({ exposed, ...c }));
  collisions.sort((a, b) => compareNames(a.kept, b.kept));

  return {
    byExposed,
    exposedFor: (server, name) => byServer.get(server)?.get(name),
    collisions,
  };
}

/** Code-unit order on (server, name): locale-independent, identical on every machine. */
export function compareNames(a: UpstreamName, b: UpstreamName): number {
  return compareStrings(a.server, b.server) || compareStrings(a.name, b.name);
}

function compareStrings(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

function uniqueSorted(entries: readonly UpstreamName[]): UpstreamName[] {
  const sorted = [...entries].sort(compareNames);
  return sorted.filter((entry, i) => i === 0 || compareNames(entry, sorted[i - 1] as UpstreamName) !== 0);
}

function renameUntilFree(
  entry: UpstreamName,
  wanted: string,
  taken: ReadonlyMap<string, UpstreamName>,
  max: number,
): string {
  // NUL cannot occur in a config key, so `server\0name` is unambiguous.
  const seed = `${entry.server}\u0000${entry.name}`;
  for (let salt = 0; salt < MAX_RENAME_ATTEMPTS; salt += 1) {
    const hash = nameHash(salt === 0 ? seed : `${seed}\u0000${salt}`);
    const candidate = withSuffix(wanted, hash, max);
    if (!taken.has(candidate)) return candidate;
  }
  throw new Error(`could not find a free exposed name for "${entry.name}" of server "${entry.server}"`);
}

/** `prefix_hash`, with the prefix cut so the whole is at most `max`. `base` is sanitised ASCII. */
function withSuffix(base: string, hash: string, max: number): string {
  return `${base.slice(0, max - SUFFIX_LENGTH)}_${hash}`;
}

function assertMaxLength(max: number): void {
  if (!Number.isInteger(max) || max < SUFFIX_LENGTH + 1) {
    throw new TypeError(`names: the maximum name length must be an integer of at least ${SUFFIX_LENGTH + 1}`);
  }
}
