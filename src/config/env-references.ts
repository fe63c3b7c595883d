/**
 * `${env:NAME}` and `${input:ID}` in an operator's config file, written as Cursor, VS Code and
 * Claude Desktop files write them (docs/reference.md, "Variables in server entries"). Only the
 * operator's own file is read this way: plugin manifests and servers a client brings keep their
 * values literal (plugins/placeholders.ts, session-servers.ts), so nothing of the gateway's
 * environment ever reaches a place an outsider chose.
 *
 * Where: a remote server's header values and `url`, a stdio server's `env` values and `args`.
 * Header values, `env` values and `args` are kept as templates and filled in when each request or
 * child is built (as `envHeaders` are); the `url` is filled in before the config is judged, since
 * the egress policy judges the URL the gateway dials (config/environment.ts).
 *
 * An `${input:ID}` names one of the file's `inputs` (VS Code prompts for those; a gateway cannot):
 * it reads the environment variable the input's `"portcullis": { "env": "NAME" }` names, and is
 * refused, naming the input, when there is none. Any other `${…}` (`${workspaceFolder}`,
 * `${userHome}`, Claude Code's `${VAR}`) is refused naming the placeholder: a placeholder is never
 * passed through. Pure: no environment is read here.
 */

/** Literal text and variable references, in order: `Bearer ${env:T}` is `['Bearer ', { env: 'T' }]`. */
export type Template = readonly (string | { readonly env: string })[];

/** A variable an entry reads, with the field that reads it (`servers.x.headers.Authorization`). */
export interface VariableUse {
  readonly variable: string;
  readonly field: string;
}

/** What one operator server entry reads from the environment, compiled once when the config is parsed. */
export interface EnvReferences {
  /** Header name → template, for the values of `headers` that hold a reference. */
  readonly headers: Readonly<Record<string, Template>>;
  /** Variable name → template, for the values of a stdio `env` that hold a reference. */
  readonly env: Readonly<Record<string, Template>>;
  /** Index → template, for the `args` that hold a reference. */
  readonly args: Readonly<Record<number, Template>>;
  /** The `url`'s template, until config/environment.ts fills it in. */
  readonly url?: Template;
  /** Every variable read, with the field reading it (for the policy, `check`, and redaction). */
  readonly variables: readonly VariableUse[];
}

/** `${input:ID}` → the environment variable the operator named for it, or `undefined` when none. */
export type InputVariables = ReadonlyMap<string, string | undefined>;

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Bounds on what is reported about a placeholder: it is operator text, not a secret, but it may be long. */
const MAX_QUOTED = 64;

function quoted(placeholder: string): string {
  return placeholder.length > MAX_QUOTED ? `${placeholder.slice(0, MAX_QUOTED)}…}` : placeholder;
}

export type TemplateParse = { ok: true; template: Template | undefined } | { ok: false; message: string };

/**
 * Parses one value: `template` is `undefined` when the value holds no placeholder (it is used as
 * written). A problem names the placeholder, never the rest of the value.
 */
export function parseTemplate(value: string, inputs: InputVariables): TemplateParse {
  if (!value.includes('${')) return { ok: true, template: undefined };
  const parts: (string | { env: string })[] = [];
  let last = 0;
  for (const match of value.matchAll(PLACEHOLDER)) {
    const body = match[1]!;
    const colon = body.indexOf(':');
    const kind = colon === -1 ? '' : body.slice(0, colon);
    const name = body.slice(colon + 1);
    let variable: string;
    if (kind === 'env') {
      if (!VARIABLE_NAME.test(name)) return { ok: false, message: `${quoted(match[0])} does not name an environment variable (letters, digits and "_")` };
      variable = name;
    } else if (kind === 'input') {
      if (!inputs.has(name)) return { ok: false, message: `${quoted(match[0])} names no entry of "inputs"` };
      const mapped = inputs.get(name);
      if (mapped === undefined) {
        return { ok: false, message: `${quoted(match[0])}: the gateway cannot prompt for an input; give inputs entry "${name}" "portcullis": { "env": "NAME" } to read it from the variable NAME` };
      }
      variable = mapped;
    } else {
      // Claude Code's `${VAR}` reads a variable; VS Code's own (`${workspaceFolder}`) are camelCase and have no equivalent.
      const hint = /^[A-Z_][A-Z0-9_]*$/.test(body) ? ` (write \${env:${body}} to read the environment variable)` : '';
      return { ok: false, message: `${quoted(match[0])} is not expanded by the gateway; only \${env:NAME} and \${input:ID} are${hint}` };
    }
    if (match.index > last) parts.push(value.slice(last, match.index));
    parts.push({ env: variable });
    last = match.index + match[0].length;
  }
  if (parts.length === 0) {
    // "${" without a closing brace: not a placeholder any client expands, but never sent as one either.
    return { ok: false, message: 'holds "${" without a closing "}"; a placeholder is never passed through' };
  }
  const rest = value.slice(last);
  if (rest.includes('${')) return { ok: false, message: 'holds "${" without a closing "}"; a placeholder is never passed through' };
  if (rest !== '') parts.push(rest);
  return { ok: true, template: Object.freeze(parts) };
}

export type Expansion = { ok: true; value: string } | { ok: false; variable: string };

/** Fills a template in from `readEnv`; the first unset variable stops it (a value is never built short). */
export function expandTemplate(template: Template, readEnv: (name: string) => string | undefined): Expansion {
  let value = '';
  for (const part of template) {
    if (typeof part === 'string') {
      value += part;
      continue;
    }
    const read = readEnv(part.env);
    if (read === undefined) return { ok: false, variable: part.env };
    value += read;
  }
  return { ok: true, value };
}

/** The variables a template reads. */
export function templateVariables(template: Template): string[] {
  return template.flatMap((part) => (typeof part === 'string' ? [] : [part.env]));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Bound on `inputs` entries: VS Code files hold a handful. */
const MAX_INPUTS = 256;

/**
 * Reads a config file's top-level `inputs` (VS Code's: `{ id, type, description, password, … }`).
 * The gateway reads one key of its own on an entry, `"portcullis": { "env": "NAME" }`; every
 * other key is VS Code's and is ignored.
 */
export function parseInputs(raw: unknown): { inputs: InputVariables; problems: string[] } {
  const inputs = new Map<string, string | undefined>();
  const problems: string[] = [];
  if (raw === undefined) return { inputs, problems };
  if (!Array.isArray(raw)) return { inputs, problems: ['inputs: must be an array (VS Code\'s "inputs")'] };
  if (raw.length > MAX_INPUTS) return { inputs, problems: [`inputs: at most ${MAX_INPUTS} entries`] };
  raw.forEach((entry, index) => {
    const at = `inputs[${index}]`;
    if (!isRecord(entry) || typeof entry.id !== 'string' || entry.id === '') {
      problems.push(`${at}: must be an object with a string "id"`);
      return;
    }
    if (inputs.has(entry.id)) problems.push(`${at}: id "${quoted(entry.id)}" is listed twice`);
    const own = entry.portcullis;
    if (own === undefined) {
      inputs.set(entry.id, undefined);
      return;
    }
    if (!isRecord(own) || typeof own.env !== 'string' || !VARIABLE_NAME.test(own.env) || Object.keys(own).some((k) => k !== 'env')) {
      problems.push(`${at}.portcullis: must be { "env": "NAME" } naming the environment variable to read`);
      inputs.set(entry.id, undefined);
      return;
    }
    inputs.set(entry.id, own.env);
  });
  return { inputs, problems };
}

/** The fields of one entry references are read from, as the schema parsed them. */
export interface ReferenceFields {
  readonly transport: string;
  readonly command?: string;
  readonly cwd?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Compiles the references of one operator server entry: `references` is `undefined` when the
 * entry holds none. Problems name the field (and a placeholder), never a value.
 */
export function compileEnvReferences(name: string, server: ReferenceFields, inputs: InputVariables): { references: EnvReferences | undefined; problems: string[] } {
  const at = `servers.${name}`;
  const problems: string[] = [];
  const variables: VariableUse[] = [];
  const read = (field: string, value: string): Template | undefined => {
    const parsed = parseTemplate(value, inputs);
    if (!parsed.ok) {
      problems.push(`${field}: ${parsed.message}`);
      return undefined;
    }
    if (parsed.template !== undefined) for (const variable of templateVariables(parsed.template)) variables.push({ variable, field });
    return parsed.template;
  };
  // Clients expand references in these two as well; the gateway does not, and says so.
  for (const field of ['command', 'cwd'] as const) {
    const value = server[field];
    if (value !== undefined && value.includes('${')) problems.push(`${at}.${field}: placeholders are not expanded in ${field}; write the value`);
  }
  const headers: Record<string, Template> = {};
  for (const [header, value] of Object.entries(server.headers ?? {})) {
    const template = read(`${at}.headers.${header}`, value);
    if (template !== undefined) headers[header] = template;
  }
  const env: Record<string, Template> = {};
  for (const [variable, value] of Object.entries(server.env ?? {})) {
    const template = read(`${at}.env.${variable}`, value);
    if (template !== undefined) env[variable] = template;
  }
  const args: Record<number, Template> = {};
  (server.args ?? []).forEach((value, index) => {
    const template = read(`${at}.args[${index}]`, value);
    if (template !== undefined) args[index] = template;
  });
  const url = server.url === undefined ? undefined : read(`${at}.url`, server.url);
  if (variables.length === 0) return { references: undefined, problems };
  const references: EnvReferences = { headers, env, args, ...(url === undefined ? {} : { url }), variables };
  return { references, problems };
}
