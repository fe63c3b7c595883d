/**
 * Reading a YAML frontmatter within bounds a hostile plugin cannot stretch. An agent file may be
 * 256 KiB; every file of every plugin is parsed at start-up and on each re-read, so the cost of one
 * file must be linear in its size and small in absolute terms:
 *
 * 1. the frontmatter is at most {@link MAX_FRONTMATTER_BYTES} (UTF-8), checked before any parsing;
 * 2. an upper bound on its mapping keys, counted from the `yaml` lexer's tokens (one linear pass),
 *    is at most {@link MAX_FRONTMATTER_KEYS}, checked before the document is composed;
 * 3. the document is composed with the library's `uniqueKeys` check off — that check compares each
 *    new key with every earlier key of its mapping, quadratic in the keys (three 256 KiB files of
 *    ~33,000 keys took over a minute) — and duplicates are found here with one set per mapping.
 *
 * A duplicate is judged as the value will be read: two keys that become the same property of the
 * JavaScript object (`1` and `"1"`, `null` and `""`) are duplicates, so no later key silently
 * overrides an earlier one. Keys must be scalars: a mapping or alias used as a key means something
 * different to each reader, and an agent's fields are never keyed that way.
 */
import { CST, isScalar, Lexer, parseDocument, visit } from 'yaml';

/** Frontmatter holds a few fields and a tools list (≤ 256 names of ≤ 256 characters): 64 KiB is ample. */
export const MAX_FRONTMATTER_BYTES = 64 * 1024;
/** Keys across every mapping of one frontmatter, nested ones included. */
export const MAX_FRONTMATTER_KEYS = 512;
/** Aliases a frontmatter may expand; a handful is plenty, thousands is an attack. */
const MAX_ALIAS_COUNT = 32;

export type FrontmatterRead = { readonly ok: true; readonly data: unknown } | { readonly ok: false; readonly message: string };

/**
 * An upper bound on the mapping keys of `yaml`, from its lexer tokens: every key is introduced by a
 * `:` or `?` indicator, or is an entry of a flow mapping (at most one more than its commas). Scalar
 * text never counts: the lexer hands a scalar over as one token after a scalar marker.
 */
export function countKeyIndicators(yaml: string): number {
  let keys = 0;
  let afterScalarMarker = false;
  const flow: boolean[] = []; // innermost last: true for a flow mapping, false for a flow sequence
  for (const token of new Lexer().lex(yaml)) {
    const type: string | null = afterScalarMarker ? 'scalar-text' : CST.tokenType(token);
    afterScalarMarker = type === 'scalar';
    switch (type) {
      case 'map-value-ind':
      case 'explicit-key-ind':
        keys++;
        break;
      case 'flow-map-start':
        keys++;
        flow.push(true);
        break;
      case 'flow-seq-start':
        flow.push(false);
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        flow.pop();
        break;
      case 'comma':
        if (flow.at(-1) === true) keys++;
        break;
      default:
        break;
    }
  }
  return keys;
}

/** The JavaScript property name a scalar key becomes (as the `yaml` library's `toJS` names it). */
function propertyName(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

/** The first duplicate or non-scalar key of the document, in one pass over its mappings. */
function keyFault(doc: ReturnType<typeof parseDocument>): string | undefined {
  let fault: string | undefined;
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key: unknown = pair.key;
        if (key !== null && !isScalar(key)) {
          fault = 'uses a key that is not a plain value (a mapping, list or alias)';
          return visit.BREAK;
        }
        const name = propertyName(key === null ? null : key.value);
        if (seen.has(name)) {
          fault = 'declares a key twice';
          return visit.BREAK;
        }
        seen.add(name);
      }
      return undefined;
    },
  });
  return fault;
}

/** Parses a frontmatter's YAML (core schema, strict, no unknown tags) into plain data, within bounds. */
export function readFrontmatterYaml(yaml: string): FrontmatterRead {
  if (Buffer.byteLength(yaml, 'utf8') > MAX_FRONTMATTER_BYTES) {
    return { ok: false, message: `is larger than ${MAX_FRONTMATTER_BYTES / 1024} KiB` };
  }
  if (countKeyIndicators(yaml) > MAX_FRONTMATTER_KEYS) {
    return { ok: false, message: `has more than ${MAX_FRONTMATTER_KEYS} keys` };
  }
  const doc = parseDocument(yaml, { uniqueKeys: false, prettyErrors: false, schema: 'core', strict: true });
  // Warnings too: an unresolved tag (`!!js/function`) is downgraded to a string by the library,
  // and a frontmatter that means something else to another reader is not one to half-trust.
  const [error] = [...doc.errors, ...doc.warnings];
  if (error !== undefined) {
    const line = error.linePos?.[0]?.line;
    return { ok: false, message: `is not valid YAML (${error.code}${line === undefined ? '' : ` at frontmatter line ${line}`})` };
  }
  const fault = keyFault(doc);
  if (fault !== undefined) return { ok: false, message: fault };
  try {
    return { ok: true, data: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch {
    return { ok: false, message: 'expands too many aliases' };
  }
}
