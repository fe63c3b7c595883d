/**
 * The compact description the catalogue generator expands into tools: a family of resources (what
 * a kind of product manages: repositories and pull requests, channels and messages, pods and
 * deployments…) and the servers that implement it, each with its own product name, naming style
 * and vocabulary, the way real MCP servers of one kind differ from each other.
 */

/**
 * Fields as `name|description; name:type|description; …`. Types: `string` (default), `integer`,
 * `number`, `boolean`, `array` (of strings), `object`, or `enum(a,b,c)`. A leading `*` marks a
 * field required on create.
 */
export type FieldList = string;

export interface ResourceSpec {
  /** Singular noun, lower case: `pull request`. */
  n: string;
  /** Plural when not `n + s`. */
  p?: string;
  /** Name of the identifier parameter (snake case); `id` when absent. */
  id?: string;
  /** Context parameters (keys of the family's `context`) every tool of this resource takes. */
  in?: string[];
  /** Fields set on create and update. */
  f?: FieldList;
  /** Filters of list (and search). */
  q?: FieldList;
  /** Standard verbs: any of `list get create update delete search`. */
  v: string;
  /**
   * Other operations: key is the tool's verb phrase, `*` standing for the noun (`list_*_files`);
   * a one-word phrase is followed by the noun (`merge` → `merge_pull_request`), a longer one
   * is the whole name (`who_is_on_call`). Value is the description (`{n}` is the noun) or `[description, fields]`; a key
   * ending in `!` takes no identifier.
   */
  x?: Record<string, string | [string, FieldList]>;
}

export interface FamilySpec {
  /** ` in a repository`: appended to list/create descriptions. */
  scope: string;
  /** Descriptions of the context parameters resources refer to with `in`. */
  context: Record<string, string>;
  resources: ResourceSpec[];
}

export type NamingStyle = 'snake' | 'camel' | 'kebab' | 'dotted' | 'prefixed';

export interface ServerSpec {
  name: string;
  product: string;
  family: string;
  style: NamingStyle;
  instructions: string;
  /** Noun replacements for this product (`pull request` → `merge request`). */
  rename?: Record<string, string>;
  /** Share of standard verbs kept (seeded), 1 when absent. */
  keep?: number;
  /** Share of the common extra operations (bulk, export, audit log…) added per resource. */
  around?: number;
}
