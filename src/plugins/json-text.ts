/**
 * A JSON document with the positions of its parts: values come from `JSON.parse` (the manifest
 * formats are strict JSON, no comments or trailing commas), positions from `jsonc-parser`'s syntax
 * tree, which keeps every node's offset. Offsets are UTF-16 code units, as JavaScript strings and
 * LSP positions count them.
 */
import { findNodeAtLocation, parseTree, type Node, type ParseError } from 'jsonc-parser';
import type { TextPosition, TextRange } from './types.js';

export interface JsonText {
  readonly value: unknown;
  readonly text: string;
  readonly tree: Node;
  /** Offset of the first character of every line. */
  readonly lineStarts: readonly number[];
}

/** Parses strict JSON; undefined when the text is not valid JSON. */
export function parseJsonText(text: string): JsonText | undefined {
  let value: unknown;
  let tree: Node | undefined;
  try {
    value = JSON.parse(text);
    const errors: ParseError[] = [];
    tree = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false });
    if (errors.length > 0) return undefined;
  } catch {
    // Over-deep input makes either parser throw (RangeError); that is invalid JSON here too.
    return undefined;
  }
  if (tree === undefined) return undefined;
  return { value, text, tree, lineStarts: lineStartsOf(text) };
}

/** Line breaks are `\n`, `\r\n` and `\r`, as LSP positions count them. */
function lineStartsOf(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x0d && text.charCodeAt(i + 1) === 0x0a) continue;
    if (code === 0x0a || code === 0x0d) starts.push(i + 1);
  }
  return starts;
}

/** The line and character of a UTF-16 offset into the document. */
export function positionAt(json: JsonText, offset: number): TextPosition {
  const starts = json.lineStarts;
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] as number) <= offset) low = mid;
    else high = mid - 1;
  }
  return { line: low, character: offset - (starts[low] as number) };
}

/**
 * The span of the object member at `path` — from its key's opening quote through the end of its
 * value — or undefined when there is no such member.
 */
export function memberRange(json: JsonText, path: readonly (string | number)[]): TextRange | undefined {
  const member = findNodeAtLocation(json.tree, [...path])?.parent;
  if (member?.type !== 'property') return undefined;
  return { start: positionAt(json, member.offset), end: positionAt(json, member.offset + member.length) };
}

/** Member names of the object at `path` that appear more than once (JSON.parse keeps only the last). */
export function duplicateMembers(json: JsonText, path: readonly (string | number)[]): Set<string> {
  const node = path.length === 0 ? json.tree : findNodeAtLocation(json.tree, [...path]);
  const seen = new Set<string>();
  const duplicated = new Set<string>();
  for (const member of node?.type === 'object' ? (node.children ?? []) : []) {
    const key = member.children?.[0]?.value;
    if (typeof key !== 'string') continue;
    if (seen.has(key)) duplicated.add(key);
    seen.add(key);
  }
  return duplicated;
}
