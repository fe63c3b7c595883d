/**
 * "Did you mean" for a misspelt config key: the keys the schema accepts at the place of the
 * unknown one, read from the zod schema itself (so the list never drifts from it), and the
 * closest by edit distance (Damerau–Levenshtein, adjacent swaps counting one) when it is close
 * enough to be a slip rather than another word: at most a third of the key's length, at least one.
 */
import type { z } from 'zod';

/** zod 4's definition of a schema node, as far as the walk below reads it. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: readonly z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Through optional, default, transform and the like, to the node that has the shape. */
function unwrap(schema: z.ZodType): z.ZodType {
  let node = schema;
  for (let depth = 0; depth < 32; depth++) {
    const def = defOf(node);
    const next = def.innerType ?? (def.type === 'pipe' ? def.in : undefined) ?? (def.type === 'lazy' ? def.getter?.() : undefined);
    if (next === undefined) return node;
    node = next;
  }
  return node;
}

/** The nodes a path segment leads to from `schema` (every branch of a union). */
function step(schema: z.ZodType, segment: PropertyKey): z.ZodType[] {
  const def = defOf(unwrap(schema));
  switch (def.type) {
    case 'object':
      return typeof segment === 'string' && def.shape?.[segment] !== undefined ? [def.shape[segment]] : [];
    case 'record':
      return def.valueType === undefined ? [] : [def.valueType];
    case 'array':
      return def.element === undefined ? [] : [def.element];
    case 'union':
      return (def.options ?? []).flatMap((option) => step(option, segment));
    case 'intersection':
      return [def.left, def.right].flatMap((side) => (side === undefined ? [] : step(side, segment)));
    default:
      return [];
  }
}

function objectKeys(schema: z.ZodType): string[] {
  const def = defOf(unwrap(schema));
  if (def.type === 'object') return Object.keys(def.shape ?? {});
  if (def.type === 'union') return (def.options ?? []).flatMap(objectKeys);
  if (def.type === 'intersection') return [def.left, def.right].flatMap((side) => (side === undefined ? [] : objectKeys(side)));
  return [];
}

/** Every key the schema accepts in the object at `path` (the path of a zod issue). */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let nodes = [schema];
  for (const segment of path) nodes = nodes.flatMap((node) => step(node, segment));
  return [...new Set(nodes.flatMap(objectKeys))];
}

/** Edit distance with adjacent transpositions (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/** Keys longer than this are not compared (an unknown key is the operator's text, but bounded work all the same). */
const MAX_COMPARED_LENGTH = 64;

/** The candidate `key` was most likely meant to be, if one is close enough. */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  if (key.length > MAX_COMPARED_LENGTH) return undefined;
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance > Math.max(1, Math.floor(Math.max(key.length, candidate.length) / 3))) continue;
    if (best === undefined || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate;
}
