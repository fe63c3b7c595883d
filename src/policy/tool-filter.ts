/**
 * The tool filter: one compiled predicate that decides whether a tool name is visible.
 *
 * The same predicate filters `tools/list` and re-checks `tools/call` (docs/decisions.md, "Hidden
 * means not callable"), so it is pure, compiled once at boot, and costs a few set lookups per name.
 *
 * Two uses, two compiled filters:
 * - per server, on the upstream's original tool names: `enabledTools` / `disabledTools`;
 * - in the policy, on namespaced names: `deniedGlobs` (e.g. `*__delete_*`).
 * A caller that needs both simply ANDs the two predicates.
 */

/** A precompiled case-insensitive glob: `*` is any run of characters, `?` exactly one. */
export interface Glob {
  /** The pattern as written (for diagnostics; patterns are policy, not secrets). */
  readonly pattern: string;
  test(name: string): boolean;
}

export interface ToolFilterOptions {
  /** Exact names to allow; empty allows every name not otherwise excluded. */
  readonly enabledTools: readonly string[];
  /** Exact names to hide; wins over `enabledTools`. */
  readonly disabledTools: readonly string[];
  /** Glob patterns (see {@link compileGlob}) of names to hide; win over `enabledTools`. */
  readonly deniedGlobs?: readonly string[];
}

/** `true` when the name may be listed and called. */
export type ToolPredicate = (name: string) => boolean;

/**
 * Compiles a glob pattern once. Matching is case-insensitive and runs in O(pattern × name) time
 * with no backtracking explosion: the names it is tested on come from upstream servers, which
 * may be hostile, so a pattern like `*a*a*a*b` must not be turned into a backtracking RegExp
 * that a crafted long tool name could stall (ReDoS). Every character other than `*` and `?` is
 * literal. Throws `TypeError` on an empty pattern (it could only ever match an empty name).
 */
export function compileGlob(pattern: string): Glob {
  return compileGlobFolding(pattern, false);
}

/** The same glob, case included: for identities (principal names), where `Kate` is not `kate`. */
export function compileExactGlob(pattern: string): Glob {
  return compileGlobFolding(pattern, true);
}

function compileGlobFolding(pattern: string, caseSensitive: boolean): Glob {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw new TypeError('tool filter: a glob pattern must be a non-empty string');
  }
  const fold = caseSensitive ? (text: string) => text : (text: string) => text.toLowerCase();
  // Runs of `*` are equivalent to one `*`; collapsing them keeps the matcher's work minimal.
  const tokens = Array.from(fold(pattern).replace(/\*+/g, '*'));
  const literalOnly = !tokens.includes('*') && !tokens.includes('?');
  const literal = tokens.join('');

  return {
    pattern,
    test(name: string): boolean {
      const lowered = fold(name);
      if (literalOnly) return lowered === literal;
      return wildcardMatch(tokens, Array.from(lowered));
    },
  };
}

/**
 * Classic greedy wildcard matching with a single backtrack point (the last `*` seen): linear in
 * practice, O(n × m) worst case. Both sides are arrays of code points, so `?` is one character.
 */
function wildcardMatch(pattern: readonly string[], text: readonly string[]): boolean {
  let p = 0;
  let t = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (t < text.length) {
    const token = pattern[p];
    if (token === '*') {
      starAt = p;
      resumeAt = t;
      p += 1;
    } else if (token !== undefined && (token === '?' || token === text[t])) {
      p += 1;
      t += 1;
    } else if (starAt !== -1) {
      p = starAt + 1;
      resumeAt += 1;
      t = resumeAt;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p += 1;
  return p === pattern.length;
}

/**
 * Compiles the filter options into one predicate. Exact names are case-sensitive (MCP tool
 * names are); `disabledTools` and `deniedGlobs` win over `enabledTools`; an empty
 * `enabledTools` allows all. Throws `TypeError` on an empty entry, naming the field.
 */
export function compileToolFilter(options: ToolFilterOptions): ToolPredicate {
  const enabled = exactSet(options.enabledTools, 'enabledTools');
  const disabled = exactSet(options.disabledTools, 'disabledTools');
  const globs = (options.deniedGlobs ?? []).map((pattern) => {
    try {
      return compileGlob(pattern);
    } catch {
      throw new TypeError('tool filter: deniedGlobs entries must be non-empty strings');
    }
  });
  const allowAll = enabled.size === 0;

  return function toolFilter(name: string): boolean {
    if (disabled.has(name)) return false;
    if (!allowAll && !enabled.has(name)) return false;
    for (const glob of globs) {
      if (glob.test(name)) return false;
    }
    return true;
  };
}

function exactSet(names: readonly string[], field: string): ReadonlySet<string> {
  for (const name of names) {
    if (typeof name !== 'string' || name.length === 0) {
      throw new TypeError(`tool filter: ${field} entries must be non-empty strings`);
    }
  }
  return new Set(names);
}
