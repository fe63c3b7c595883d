/**
 * `portcullis import` of an MCP registry `server.json` (schema
 * https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json; also the registry
 * API's `{ "server": … }` answer): one gateway config entry, under the rules every import follows
 * (import-result.ts) — secrets are `${env:NAME}` references, never values.
 *
 * Which one: the first package the gateway can run — `npm` (`npx -y <id>@<version>`), `pypi`
 * (`uvx <id>@<version>`), `oci` (`docker run -i --rm … <image>`) over stdio — else the first
 * remote (`streamable-http` or `sse`). Every other package or remote is named in the notes.
 *
 * How a package becomes a command line: the runtime (`runtimeHint`, else the type's usual one),
 * the `runtimeArguments`, the package, then the `packageArguments`. A named argument is its flag
 * and its value as two arguments; a positional one its value. A value is the input's `value` (with
 * its `{variables}` filled in), else its `default`; one with neither that the server requires, or
 * any secret, becomes a `${env:NAME}` reference the operator exports. `environmentVariables` are
 * the child's `env` by the same rule (a secret is `${env:<its own name>}`); for `oci` each is also
 * passed into the container (`-e NAME`), since `docker run` hands a container nothing otherwise.
 * Remote headers and `{variables}` in a remote URL follow the same rule.
 */
import { ImportVariables, serverName, variableName, type ImportResult } from './import-result.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** True for a server.json (a `name` and `packages` or `remotes`) or the registry API's `{ server }` answer. */
export function isRegistryServer(raw: Record<string, unknown>): boolean {
  const server = isRecord(raw.server) && raw.mcpServers === undefined && raw.servers === undefined ? raw.server : raw;
  return typeof server.name === 'string' && (Array.isArray(server.packages) || Array.isArray(server.remotes)) && server.mcpServers === undefined && server.servers === undefined;
}

/** The runtime a package type runs with by default, and how it names a version. */
const RUNTIMES: Record<string, { command: string; fixed: string[]; spec: (id: string, version: string | undefined) => string }> = {
  npm: { command: 'npx', fixed: ['-y'], spec: (id, version) => (version === undefined ? id : `${id}@${version}`) },
  pypi: { command: 'uvx', fixed: [], spec: (id, version) => (version === undefined ? id : `${id}@${version}`) },
  // An OCI identifier carries its tag or digest (2025-09-29); older files gave the version apart.
  oci: { command: 'docker', fixed: ['run', '-i', '--rm'], spec: (id, version) => (version === undefined || /[:@][^/]*$/.test(id) ? id : `${id}:${version}`) },
};

/** The number of inputs of one file the import reads (each becomes at most a few arguments). */
const MAX_INPUTS = 256;

interface Context {
  readonly server: string;
  readonly variables: ImportVariables;
  readonly notes: string[];
}

/**
 * One input's value for the config: its literal (its `{variables}` filled in), or a reference
 * when it is secret or has no value the file gives. `undefined` when it is optional and has none.
 */
function inputValue(input: Record<string, unknown>, wanted: string, why: string, context: Context): string | undefined {
  const label = text(input.description) ?? text(input.valueHint) ?? wanted;
  if (input.isSecret === true) return context.variables.use(wanted, context.server, `<${label}>`, why);
  const given = text(input.value) ?? text(input.default);
  if (given === undefined) return input.isRequired === true ? context.variables.use(wanted, context.server, `<${label}>`, why) : undefined;
  const vars = isRecord(input.variables) ? input.variables : {};
  return given.replace(/\{([A-Za-z0-9_.-]+)\}/g, (match, key: string) => {
    const variable = vars[key];
    if (!isRecord(variable)) return match; // not a variable of this input: kept as written (the schema's rule)
    return inputValue(variable, variableName(key), `${why} {${key}}`, context) ?? '';
  });
}

/** A package's or runtime's arguments. */
function argumentsOf(list: unknown, field: string, context: Context): string[] {
  const out: string[] = [];
  (Array.isArray(list) ? list.slice(0, MAX_INPUTS) : []).forEach((arg, index) => {
    const why = `${field}[${index}]`;
    if (!isRecord(arg)) return;
    if (arg.type === 'named' && typeof arg.name === 'string') {
      const flagVariable = variableName(context.server, arg.name);
      const value = inputValue(arg, flagVariable, why, context);
      if (value !== undefined) out.push(arg.name, value);
      else if (arg.value === undefined && arg.default === undefined && arg.format === 'boolean') out.push(arg.name);
      else context.notes.push(`${why} (${arg.name}): optional and without a default; left out`);
      return;
    }
    if (arg.type === 'positional') {
      // A positional argument holds a place on the command line: without a value it is asked for.
      const hint = text(arg.valueHint) ?? `argument ${index}`;
      out.push(inputValue({ ...arg, isRequired: true }, variableName(context.server, hint), why, context)!);
    }
  });
  return out;
}

function environmentOf(list: unknown, context: Context): Record<string, string> {
  const env: Record<string, string> = {};
  for (const item of Array.isArray(list) ? list.slice(0, MAX_INPUTS) : []) {
    if (!isRecord(item) || typeof item.name !== 'string') continue;
    const value = inputValue(item, item.name, `servers.${context.server}.env.${item.name}`, context);
    if (value !== undefined) env[item.name] = value;
    else context.notes.push(`servers.${context.server}.env.${item.name}: optional and without a default; left out (set it in env to use it)`);
  }
  return env;
}

function packageEntry(pkg: Record<string, unknown>, index: number, context: Context): Record<string, unknown> | string {
  const type = text(pkg.registryType) ?? text(pkg.registry_type);
  const identifier = text(pkg.identifier);
  if (type === undefined || identifier === undefined) return `packages[${index}]: no registryType or identifier`;
  const runtime = RUNTIMES[type];
  if (runtime === undefined) return `packages[${index}] (${type}): not a package type the gateway runs (npm, pypi, oci)`;
  const transport = isRecord(pkg.transport) ? text(pkg.transport.type) : 'stdio';
  if (transport !== undefined && transport !== 'stdio') return `packages[${index}] (${type}): serves ${transport}, not stdio; run it yourself and import its URL`;
  const field = `packages[${index}]`;
  const hint = text(pkg.runtimeHint);
  const env = environmentOf(pkg.environmentVariables, context);
  const args = [
    ...(hint === undefined || hint === runtime.command ? runtime.fixed : []),
    ...argumentsOf(pkg.runtimeArguments, `${field}.runtimeArguments`, context),
    // docker hands the container only the variables named on its command line.
    ...(type === 'oci' ? Object.keys(env).flatMap((name) => ['-e', name]) : []),
    runtime.spec(identifier, text(pkg.version)),
    ...argumentsOf(pkg.packageArguments, `${field}.packageArguments`, context),
  ];
  return { transport: 'stdio', command: hint ?? runtime.command, args, ...(Object.keys(env).length > 0 ? { env } : {}) };
}

function remoteEntry(remote: Record<string, unknown>, index: number, context: Context): Record<string, unknown> | string {
  const type = text(remote.type) ?? text(remote.transport_type);
  const url = text(remote.url);
  const transport = type === 'streamable-http' ? 'streamableHttp' : type === 'sse' ? 'sse' : undefined;
  if (transport === undefined || url === undefined) return `remotes[${index}]: not a streamable-http or sse remote with a url`;
  const headers: Record<string, string> = {};
  for (const header of Array.isArray(remote.headers) ? remote.headers.slice(0, MAX_INPUTS) : []) {
    if (!isRecord(header) || typeof header.name !== 'string') continue;
    const why = `servers.${context.server} header ${header.name}`;
    const value = inputValue(header, variableName(context.server, header.name), why, context);
    if (value !== undefined) headers[header.name] = value;
    else context.notes.push(`${why}: optional and without a default; left out`);
  }
  // `{name}` in a remote URL (2025-12-11) is one of the remote's `variables`: its value, else a variable to export.
  const vars = isRecord(remote.variables) ? remote.variables : {};
  const templated = url.replace(/\{([A-Za-z0-9_.-]+)\}/g, (_, key: string) => {
    const input = isRecord(vars[key]) ? vars[key] : {};
    return inputValue({ ...input, isRequired: true }, variableName(context.server, key), `servers.${context.server}.url {${key}}`, context)!;
  });
  return { transport, url: templated, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
}

/** Converts a registry server.json (already parsed). */
export function importRegistryServer(raw: Record<string, unknown>): ImportResult {
  const detail = isRecord(raw.server) && typeof raw.name !== 'string' ? raw.server : raw;
  const name = serverName(String(detail.name).split('/').pop() ?? String(detail.name));
  const notes: string[] = [];
  const variables = new ImportVariables();
  const skipped: string[] = [];
  let entry: Record<string, unknown> | undefined;
  const candidates: Array<() => Record<string, unknown> | string> = [
    ...(Array.isArray(detail.packages) ? detail.packages : []).map((pkg, index) => () => (isRecord(pkg) ? packageEntry(pkg, index, { server: name, variables, notes }) : `packages[${index}]: not an object`)),
    ...(Array.isArray(detail.remotes) ? detail.remotes : []).map((remote, index) => () => (isRecord(remote) ? remoteEntry(remote, index, { server: name, variables, notes }) : `remotes[${index}]: not an object`)),
  ];
  for (const [index, candidate] of candidates.entries()) {
    if (entry !== undefined) {
      skipped.push(index < (Array.isArray(detail.packages) ? detail.packages.length : 0) ? `packages[${index}]` : `remotes[${index - (Array.isArray(detail.packages) ? detail.packages.length : 0)}]`);
      continue;
    }
    // Each candidate writes its own exports and notes: only the one taken may leave any.
    const before = { exports: variables.exports.length, notes: notes.length };
    const built = candidate();
    if (typeof built === 'string') {
      variables.exports.splice(before.exports);
      notes.splice(before.notes);
      notes.push(`${built}; skipped`);
    } else entry = built;
  }
  if (entry === undefined) throw new TypeError(`the server.json offers nothing the gateway can run (${notes.join('; ') || 'no packages or remotes'})`);
  if (skipped.length > 0) notes.push(`also offered, not imported: ${skipped.join(', ')} (the first one the gateway can run was taken)`);
  return { config: { servers: { [name]: entry } }, exports: variables.exports, notes };
}
