/**
 * The searchable fields of one tool: what each BM25F field holds, taken from the tool as the
 * catalogue exposes it and from the server it came from. Pure: no index, no I/O.
 */
import type { SearchableServer, SearchableTool } from './snapshot.js';

/** The fields of a tool document, in the order their weights are listed. */
export const FIELDS = ['name', 'title', 'description', 'params', 'server', 'instructions'] as const;
export type Field = (typeof FIELDS)[number];

export type ToolDocument = Record<Field, string>;

/** Per-field text caps: a hostile upstream's 1 MB description must not cost 1 MB of index. */
const MAX_FIELD_CHARS: Record<Field, number> = {
  name: 256,
  title: 512,
  description: 1_024,
  params: 1_024,
  server: 256,
  instructions: 4_096,
};

/** Most schema properties read per level (top level, then one level of nesting). */
const MAX_PROPERTIES = 64;
/** Characters of each property's description indexed: its first sentence or so says what it is. */
const MAX_PROPERTY_DESCRIPTION = 160;

/**
 * A tool's field texts. `name` is the exposed name without its server prefix when it has one
 * (`github__create_issue` → `create_issue`: the server has its own field, and counting it in the
 * name would lift every tool of a server whose name a query mentions); `params` holds property
 * names and descriptions of `inputSchema`, nested objects and arrays of objects one level deep.
 */
export function toolDocument(tool: SearchableTool, server: SearchableServer | undefined): ToolDocument {
  const doc: ToolDocument = {
    name: withoutServerPrefix(tool.name, tool.server),
    title: tool.title ?? '',
    description: tool.description ?? '',
    params: parameterText(tool.inputSchema),
    server: tool.server,
    instructions: server?.instructions ?? '',
  };
  for (const field of FIELDS) {
    if (doc[field].length > MAX_FIELD_CHARS[field]) doc[field] = doc[field].slice(0, MAX_FIELD_CHARS[field]);
  }
  return doc;
}

function withoutServerPrefix(name: string, server: string): string {
  if (!name.startsWith(server) || name.length === server.length) return name;
  const rest = name.slice(server.length);
  const separator = /^[^\p{L}\p{N}]+/u.exec(rest);
  return separator === null || separator[0].length === rest.length ? name : rest.slice(separator[0].length);
}

/**
 * Parameter texts by schema object: a server's cached list hands the same schema objects to every
 * merge, so an unchanged tool's parameters are read once. Schemas are never mutated after listing.
 */
const parameterTexts = new WeakMap<object, string>();

function parameterText(schema: unknown): string {
  const object = objectOrUndefined(schema);
  const known = object === undefined ? undefined : parameterTexts.get(object);
  if (known !== undefined) return known;
  const parts: string[] = [];
  collectProperties(schema, parts, 1);
  const text = parts.join('\n');
  if (object !== undefined) parameterTexts.set(object, text);
  return text;
}

function collectProperties(schema: unknown, parts: string[], depth: number): void {
  const properties = objectOrUndefined(objectOrUndefined(schema)?.properties);
  if (properties === undefined) return;
  for (const [name, value] of Object.entries(properties).slice(0, MAX_PROPERTIES)) {
    parts.push(name);
    const property = objectOrUndefined(value);
    if (property === undefined) continue;
    if (typeof property.description === 'string') parts.push(property.description.slice(0, MAX_PROPERTY_DESCRIPTION));
    if (depth > 0) {
      collectProperties(property, parts, depth - 1);
      collectProperties(property.items, parts, depth - 1);
    }
  }
}

function objectOrUndefined(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
