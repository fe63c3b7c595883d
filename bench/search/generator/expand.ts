/**
 * Expands server specs into `tools/list` entries: names in the server's naming style,
 * descriptions from varied phrasings (seeded, so each server words its tools its own way), and
 * JSON Schemas with described parameters, required ones marked.
 */
import type { RecordedServer, RecordedTool, ToolInputSchema } from '../catalogue-types.js';
import { hashSeed, seeded, type Random } from './prng.js';
import type { FamilySpec, FieldList, NamingStyle, ResourceSpec, ServerSpec } from './spec.js';

const STANDARD = ['list', 'get', 'create', 'update', 'delete', 'search'] as const;
type Standard = (typeof STANDARD)[number];

const PHRASES: Record<Standard, string[]> = {
  list: ['List {P}{S}.', 'Returns {P}{S}, most recent first.', 'Retrieve a paginated list of {P}{S}.', 'Get all {P}{S}, optionally filtered.', 'Lists {P} visible to the authenticated user{S}.'],
  get: ['Get a single {N} by its ID.', 'Retrieve the details of a {N}.', 'Fetch one {N} with all of its fields.', 'Returns the {N} with the given identifier.', 'Show a {N}.'],
  create: ['Create a new {N}{S}.', 'Creates a {N}.', 'Add a {N}{S}.', 'Create a {N} and return it.'],
  update: ['Update an existing {N}.', 'Modify the fields of a {N}; omitted fields are left unchanged.', 'Updates a {N}.', 'Edit a {N}.'],
  delete: ['Delete a {N}.', 'Permanently remove a {N}. This cannot be undone.', 'Deletes the {N} with the given ID.', 'Remove a {N}{S}.'],
  search: ['Search {P} by keyword.', 'Full-text search across {P}{S}.', 'Find {P} matching a query.', 'Query {P} using the search syntax of {PRODUCT}.'],
};

/**
 * Operations many APIs add around their resources; each server gets a seeded share of them, so
 * tools that differ by one word (`delete_issue`, `bulk_delete_issues`, `restore_issue`) compete
 * for the same queries, as they do in real catalogues.
 */
const AROUND: Array<[string, string, FieldList]> = [
  ['bulk_update_*s!', 'Apply the same change to many {P} at once.', '*ids:array|IDs to update; *changes:object|Fields to set'],
  ['bulk_delete_*s!', 'Delete several {P} in one call.', '*ids:array|IDs to delete'],
  ['count_*s!', 'Count {P} matching filters without fetching them.', 'filter|Filter expression'],
  ['export_*s!', 'Export {P} to CSV or JSON.', 'format:enum(csv,json)|File format; filter|Filter expression'],
  ['import_*s!', 'Import {P} from a CSV or JSON file.', '*file_path|File to import; dry_run:boolean|Validate only'],
  ['get_*_audit_log', 'Who changed a {N}, what and when.', 'since|Only entries after this time'],
  ['add_*_tag', 'Attach a tag to a {N}.', '*tag|Tag'],
  ['remove_*_tag', 'Detach a tag from a {N}.', '*tag|Tag'],
  ['get_*_permissions', 'Who can see or change a {N}.', ''],
  ['subscribe_to_*', 'Get notified when a {N} changes.', 'channel:enum(email,webhook)|Where notifications go'],
  ['restore_deleted_*', 'Restore a {N} that was deleted recently.', ''],
  ['list_deleted_*s!', 'List {P} deleted in the last 30 days.', ''],
  ['get_*_metadata', 'Metadata of a {N}: creator, timestamps and size.', ''],
  ['duplicate_*', 'Make a copy of a {N}.', 'new_name|Name of the copy'],
];

/** Share of {@link AROUND} operations a server adds per resource, unless it sets its own. */
const AROUND_SHARE = 0.08;

const TAILS: Partial<Record<Standard, string[]>> = {
  list: ['Results are paginated.', 'Use the cursor from the previous page to continue.', '', '', ''],
  delete: ['Requires admin permission.', '', ''],
  create: ['Returns the created {N}.', '', ''],
};

interface Field {
  name: string;
  schema: Record<string, unknown>;
  required: boolean;
}

function parseFields(list: FieldList | undefined): Field[] {
  if (list === undefined || list.trim() === '') return [];
  return list.split(';').map((entry) => {
    const [head = '', description = ''] = entry.split('|').map((s) => s.trim());
    const required = head.startsWith('*');
    const [name = '', type = 'string'] = head.replace(/^\*/, '').split(':');
    const schema: Record<string, unknown> = {};
    const enumMatch = /^enum\((.*)\)$/.exec(type);
    if (enumMatch !== null) {
      schema.type = 'string';
      schema.enum = (enumMatch[1] ?? '').split(',');
    } else if (type === 'array') {
      schema.type = 'array';
      schema.items = { type: 'string' };
    } else {
      schema.type = type;
    }
    schema.description = description;
    return { name, schema, required };
  });
}

function words(phrase: string): string[] {
  return phrase.split(/[\s_]+/).filter((w) => w !== '');
}

function toolName(style: NamingStyle, prefix: string, verb: string[], noun: string[]): string {
  const parts = [...verb, ...noun].map((w) => w.toLowerCase());
  switch (style) {
    case 'snake':
      return parts.join('_');
    case 'prefixed':
      return [prefix, ...parts].join('_');
    case 'kebab':
      return parts.join('-');
    case 'camel':
      return parts.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
    case 'dotted':
      return `${noun.map((w) => w.toLowerCase()).join('_')}.${verb.map((w) => w.toLowerCase()).join('_')}`;
    default: {
      const never: never = style;
      return never;
    }
  }
}

function paramName(style: NamingStyle, snake: string): string {
  return style === 'camel' || style === 'dotted' ? snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : snake;
}

const plural = (r: ResourceSpec, noun: string) => (noun === r.n && r.p !== undefined ? r.p : pluralize(noun));

function pluralize(noun: string): string {
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(noun)) return `${noun}es`;
  return `${noun}s`;
}

function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole).replace(/\s+/g, ' ').trim();
}

function pagination(style: NamingStyle, random: Random): Field[] {
  if (random.chance(0.5)) {
    return [
      { name: 'page', schema: { type: 'integer', description: 'Page number, starting at 1' }, required: false },
      { name: 'per_page', schema: { type: 'integer', description: 'Results per page (max 100)' }, required: false },
    ];
  }
  return [
    { name: 'cursor', schema: { type: 'string', description: 'Opaque cursor returned by the previous call' }, required: false },
    { name: 'limit', schema: { type: 'integer', description: 'Maximum number of results to return' }, required: false },
  ].map((f) => ({ ...f, name: paramName(style, f.name) }));
}

function schemaOf(style: NamingStyle, fields: Field[]): ToolInputSchema {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const field of fields) {
    const name = paramName(style, field.name);
    if (name in properties) continue;
    properties[name] = field.schema;
    if (field.required) required.push(name);
  }
  return required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties };
}

/** The tools of one server, in a stable order. */
export function expandServer(server: ServerSpec, family: FamilySpec, seed: number): RecordedServer {
  const random = seeded(hashSeed(server.name, seed));
  const prefix = server.name.replace(/[^a-z0-9]/g, '').slice(0, 8);
  const tools: RecordedTool[] = [];
  const seen = new Set<string>();
  const add = (tool: RecordedTool) => {
    if (!seen.has(tool.name)) {
      seen.add(tool.name);
      tools.push(tool);
    }
  };
  for (const resource of family.resources) {
    const noun = server.rename?.[resource.n] ?? resource.n;
    const values = { N: noun, P: plural(resource, noun), S: family.scope, PRODUCT: server.product, n: noun };
    const context: Field[] = (resource.in ?? []).map((key) => ({
      name: key,
      schema: { type: 'string', description: family.context[key] ?? key },
      required: true,
    }));
    const idField: Field = {
      name: resource.id ?? 'id',
      schema: { type: 'string', description: random.pick([`ID of the ${noun}`, `The ${noun} identifier`, `Unique ID of the ${noun}`]) },
      required: true,
    };
    const fields = parseFields(resource.f);
    const filters = parseFields(resource.q);
    const verbs = resource.v.split(' ').filter((v): v is Standard => (STANDARD as readonly string[]).includes(v));
    for (const verb of verbs) {
      if (verb !== 'get' && verb !== 'list' && random.next() > (server.keep ?? 1)) continue;
      const tail = random.pick(TAILS[verb] ?? ['']);
      const description = fill(`${random.pick(PHRASES[verb])} ${tail}`, values);
      const nounWords = words(verb === 'list' || verb === 'search' ? plural(resource, noun) : noun);
      let params: Field[];
      switch (verb) {
        case 'list':
          params = [...context, ...filters, ...pagination(server.style, random)];
          break;
        case 'search':
          params = [...context, { name: 'query', schema: { type: 'string', description: `Search terms` }, required: true }, ...filters, { name: 'limit', schema: { type: 'integer', description: 'Maximum results' }, required: false }];
          break;
        case 'get':
        case 'delete':
          params = [...context, idField];
          break;
        case 'create':
          params = [...context, ...fields];
          break;
        case 'update':
          params = [...context, idField, ...fields.map((f) => ({ ...f, required: false }))];
          break;
      }
      add({ name: toolName(server.style, prefix, [verb], nounWords), description, inputSchema: schemaOf(server.style, params) });
    }
    for (const [key, value] of Object.entries(resource.x ?? {})) {
      const [text, extra] = typeof value === 'string' ? [value, undefined] : value;
      const noId = key.endsWith('!');
      const phrase = key.replace(/!$/, '');
      // `merge` → merge_pull_request; `list_*_files` → list_pull_request_files; `who_is_on_call` as is.
      const nameWords = phrase.includes('*') ? words(phrase.replace('*', noun)) : words(phrase).length > 1 ? words(phrase) : [...words(phrase), ...words(noun)];
      const name = server.style === 'dotted'
        ? `${words(noun).join('_')}.${words(phrase.replace(/\*(es|s)?/, '')).join('_')}`
        : toolName(server.style, prefix, nameWords, []);
      const params = [...context, ...(noId ? [] : [idField]), ...parseFields(extra)];
      add({ name, description: fill(text, values), inputSchema: schemaOf(server.style, params) });
    }
    if (resource.v.trim() !== '') {
      for (const [key, text, extra] of AROUND) {
        if (!random.chance(server.around ?? AROUND_SHARE)) continue;
        const noId = key.endsWith('!');
        const phrase = key.replace(/!$/, '');
        const target = phrase.includes('*s') ? words(plural(resource, noun)) : words(noun);
        const bare = phrase.replace('*s', '*');
        const name = server.style === 'dotted'
          ? `${target.join('_')}.${words(bare.replace('*', '')).join('_')}`
          : toolName(server.style, prefix, words(bare.replace('*', target.join(' '))), []);
        const params = [...context, ...(noId ? [] : [idField]), ...parseFields(extra)];
        add({ name, description: fill(text, values), inputSchema: schemaOf(server.style, params) });
      }
    }
  }
  return { server: server.name, source: { generated: server.family, seed }, instructions: server.instructions, tools };
}
