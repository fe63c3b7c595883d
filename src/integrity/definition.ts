/**
 * What a tool pin covers, and its hash. A pin is the SHA-256 of the RFC 8785 canonical JSON
 * (`canonicalize`) of the parts of a tool the model reads or a host acts on: `name`, `title`,
 * `description`, `inputSchema`, `outputSchema`, `annotations` and the MCP Apps link (`_meta.ui`,
 * or the deprecated flat `_meta["ui/resourceUri"]`) — a changed UI is a changed tool. Anything
 * else an upstream puts in a tool (other `_meta`, `icons`, `execution`) is not pinned: it is not
 * text the model follows. Canonical JSON makes the hash independent of key order and number
 * spelling, so a server that re-serialises the same definition keeps its pin.
 *
 * A server's `initialize` instructions are pinned the same way (they reach the model too).
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** The pinned parts of a tool, as stored for diffs; fields the upstream left out stay absent. */
export interface PinnedDefinition {
  readonly name: string;
  readonly title?: unknown;
  readonly description?: unknown;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
  readonly _meta?: { readonly ui?: unknown; readonly 'ui/resourceUri'?: unknown };
}

const FIELDS = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

/** The pinned parts of an upstream tool as it listed it (before the gateway renames or rewrites anything). */
export function pinnedDefinition(tool: { readonly name: string } & Readonly<Record<string, unknown>>): PinnedDefinition {
  const out: Record<string, unknown> = { name: tool.name };
  for (const field of FIELDS) if (tool[field] !== undefined) out[field] = tool[field];
  const meta = tool._meta;
  if (typeof meta === 'object' && meta !== null) {
    const ui: Record<string, unknown> = {};
    const m = meta as Record<string, unknown>;
    if (m.ui !== undefined) ui.ui = m.ui;
    if (m['ui/resourceUri'] !== undefined) ui['ui/resourceUri'] = m['ui/resourceUri'];
    if (Object.keys(ui).length > 0) out._meta = ui;
  }
  return out as unknown as PinnedDefinition;
}

/**
 * `sha256:<hex>` of the canonical JSON of `value`. A value canonical JSON cannot represent
 * (a non-finite number, a cycle — impossible for parsed JSON) hashes as its own marker, so it is
 * never equal to a real definition's pin.
 */
export function canonicalHash(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch {
    text = undefined;
  }
  return `sha256:${createHash('sha256')
    .update(text ?? '\u0000unrepresentable')
    .digest('hex')}`;
}

/** The pin of a tool definition. */
export function definitionHash(definition: PinnedDefinition): string {
  return canonicalHash(definition);
}

/** The pin of a server's instructions (a string, or absent: hashed as `null`). */
export function instructionsHash(instructions: string | undefined): string {
  return canonicalHash({ instructions: instructions ?? null });
}
