/**
 * `portcullis import`: converts the MCP server list of another host into a gateway config —
 * Claude Desktop and Cursor (`mcpServers`), VS Code's `.vscode/mcp.json` (`servers` with `type`,
 * and `inputs`), an Agent Plugins `mcp.json` (`mcpServers`) — or an MCP registry `server.json`
 * (import-registry.ts). Pure: text in, config and notes out.
 *
 * Secrets never stay literal in the output: they become `${env:NAME}` references, which the
 * gateway fills in from its environment (env-references.ts), and the operator is told what to
 * export. A reference the source already makes keeps its variable — `${env:NAME}` as Cursor and
 * VS Code write it, Claude Code's `${NAME}` — and a VS Code `${input:ID}` reads a variable named
 * after the input. A header or stdio variable whose name or value looks like a credential is
 * replaced by a reference (a header keeps its `Bearer ` scheme). A placeholder the gateway never
 * expands (`${workspaceFolder}`) is kept and named in the notes: `check` refuses it until it is
 * replaced, so it is never passed through.
 *
 * A `url` without a `type` is classified by its path: one ending in `/sse` is the HTTP+SSE
 * transport's stream (MCP 2024-11-05), anything else Streamable HTTP.
 */
import { parseConfigText } from './config-text.js';
import { importRegistryServer, isRegistryServer } from './import-registry.js';
import { ImportVariables, SECRET_NAME, serverName, variableName, type ImportResult } from './import-result.js';

export type { ImportResult } from './import-result.js';

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Claude Code's `${VAR}`; VS Code's own variables (`${workspaceFolder}`, `${userHome}`) are camelCase. */
const BARE_VARIABLE = /^[A-Z_][A-Z0-9_]*$/;
const SCHEME = /^(bearer|basic|token)\s+/i;
/**
 * A source's own transport names. VS Code's `"http"` tries Streamable HTTP and falls back to
 * HTTP+SSE, so it becomes `auto`, which does the same (upstream/auto-http.ts); an explicit
 * Streamable HTTP name stays that.
 */
const TRANSPORTS: Record<string, string> = { stdio: 'stdio', http: 'auto', 'streamable-http': 'streamableHttp', streamableHttp: 'streamableHttp', sse: 'sse' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;
}

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return {};
  if (!isRecord(value)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') return undefined;
    out[k] = v;
  }
  return out;
}

/** The transport of an entry with a `url` and no `type`. */
function transportOfUrl(url: string): 'sse' | 'auto' {
  try {
    return /\/sse\/?$/i.test(new URL(url).pathname) ? 'sse' : 'auto';
  } catch {
    return 'auto';
  }
}

/** Converts one host config's (or registry server.json's) text; throws `ConfigError` on a syntax error (with line and column). */
export function importMcpJson(text: string): ImportResult {
  const raw = parseConfigText(text);
  if (!isRecord(raw)) throw new TypeError('the file holds no JSON object');
  if (isRegistryServer(raw)) return importRegistryServer(raw);
  const notes: string[] = [];
  const variables = new ImportVariables();
  const block = isRecord(raw.mcpServers) ? raw.mcpServers : isRecord(raw.servers) ? raw.servers : undefined;
  if (block === undefined) throw new TypeError('the file has no "mcpServers" or "servers" object (nor is it a registry server.json)');
  const inputs = new Map<string, string | undefined>();
  for (const input of Array.isArray(raw.inputs) ? raw.inputs : []) {
    if (isRecord(input) && typeof input.id === 'string') inputs.set(input.id, typeof input.description === 'string' ? input.description : undefined);
  }

  /** The value with each reference rewritten to the `${env:NAME}` the gateway reads; `referenced` when it held one. */
  const rewrite = (value: string, server: string, why: string): { value: string; referenced: boolean } => {
    let referenced = false;
    const out = value.replace(PLACEHOLDER, (match, body: string) => {
      const colon = body.indexOf(':');
      const kind = colon === -1 ? '' : body.slice(0, colon);
      const name = body.slice(colon + 1);
      if (kind === 'env' && VARIABLE.test(name)) {
        referenced = true;
        return variables.use(name, server, `<the value of ${name} the source read>`, why);
      }
      if (kind === 'input' && inputs.has(name)) {
        referenced = true;
        return variables.use(variableName(name), server, `<${inputs.get(name) ?? `input "${name}"`}>`, why);
      }
      if (kind === '' && BARE_VARIABLE.test(body)) {
        referenced = true;
        return variables.use(body, server, `<the value of ${body} the source read>`, why);
      }
      notes.push(`${why}: ${match.slice(0, 64)} is not expanded by the gateway; replace it with its value (check refuses it until then)`);
      return match;
    });
    return { value: out, referenced };
  };

  const servers: Record<string, Record<string, unknown>> = {};
  for (const [originalName, entry] of Object.entries(block)) {
    const name = serverName(originalName);
    if (!isRecord(entry)) {
      notes.push(`servers.${name}: skipped (not an object)`);
      continue;
    }
    if (entry.disabled === true) notes.push(`servers.${name}: was disabled in the source; imported as "mode": "optional"`);
    const type = typeof entry.type === 'string' ? TRANSPORTS[entry.type] : undefined;
    if (entry.type !== undefined && type === undefined) {
      notes.push(`servers.${name}: skipped (unsupported type)`);
      continue;
    }
    const classified = type === undefined && typeof entry.url === 'string' && typeof entry.command !== 'string' ? transportOfUrl(entry.url) : undefined;
    if (classified === 'auto') notes.push(`servers.${name}: its source names no transport: imported as "transport": "auto" (Streamable HTTP, falling back to HTTP+SSE on 404/405 where the policy allows it; the log says which was chosen)`);
    if (classified === 'sse') notes.push(`servers.${name}: its url ends in /sse: imported as "transport": "sse" (HTTP+SSE, MCP 2024-11-05); use "streamableHttp" if the server speaks Streamable HTTP there`);
    const transport = type ?? (typeof entry.command === 'string' ? 'stdio' : classified);
    if (transport === undefined) {
      notes.push(`servers.${name}: skipped (needs "command" or "url")`);
      continue;
    }
    const out: Record<string, unknown> = { transport };
    if (entry.disabled === true) out.mode = 'optional';
    if (transport === 'stdio') {
      const args = strings(entry.args ?? []);
      const env = stringRecord(entry.env);
      if (typeof entry.command !== 'string' || args === undefined || env === undefined) {
        notes.push(`servers.${name}: skipped (command, args or env of the wrong type)`);
        continue;
      }
      out.command = entry.command;
      if (args.length > 0) out.args = args.map((arg, index) => rewrite(arg, name, `servers.${name}.args[${index}]`).value);
      const written: Record<string, string> = {};
      for (const [key, value] of Object.entries(env)) {
        const why = `servers.${name}.env.${key}`;
        const rewritten = rewrite(value, name, why);
        // A literal credential: the child reads it from a variable of the same name the operator exports.
        written[key] = rewritten.referenced || !SECRET_NAME.test(key) ? rewritten.value : variables.use(key, name, `<the ${key} value from the imported file>`, why);
      }
      if (Object.keys(written).length > 0) out.env = written;
      if (entry.envFile !== undefined) notes.push(`servers.${name}.envFile: not supported; set the variables in env`);
    } else {
      const headers = stringRecord(entry.headers);
      if (typeof entry.url !== 'string' || headers === undefined) {
        notes.push(`servers.${name}: skipped (url or headers of the wrong type)`);
        continue;
      }
      out.url = rewrite(entry.url, name, `servers.${name}.url`).value;
      const written: Record<string, string> = {};
      for (const [header, value] of Object.entries(headers)) {
        const why = `servers.${name} header ${header}`;
        const rewritten = rewrite(value, name, why);
        if (rewritten.referenced || (!SECRET_NAME.test(header) && !SCHEME.test(value))) {
          written[header] = rewritten.value;
          continue;
        }
        // A literal credential is never printed back: the operator copies it from the source file.
        const scheme = SCHEME.exec(value)?.[0] ?? '';
        written[header] = `${scheme}${variables.use(variableName(name, header), name, `<the ${header} ${scheme === '' ? 'value' : 'credential'} from the imported file>`, why)}`;
      }
      if (Object.keys(written).length > 0) out.headers = written;
    }
    servers[name] = out;
  }
  return { config: { servers }, exports: variables.exports, notes };
}
