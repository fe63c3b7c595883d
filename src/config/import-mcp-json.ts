/**
 * `portcullis import`: converts the MCP server list of another host into a gateway config —
 * Claude Desktop and Cursor (`mcpServers`), VS Code's `.vscode/mcp.json` (`servers` with `type`,
 * and `inputs` whose `${input:…}` references it resolves) and an Agent Plugins `mcp.json`
 * (`mcpServers`). Pure: text in, config and notes out.
 *
 * Secrets never stay literal in the output: a header whose name or value looks like a credential,
 * or that references an input or a variable, becomes an `envHeaders` entry reading a variable the
 * operator exports (the notes list each, with the value to give it). stdio servers take literal
 * `env` values only, so a secret-looking or referenced stdio variable is left out and named in the
 * notes for the operator to set by hand.
 */
import { parseConfigText } from './config-text.js';

export interface ImportResult {
  /** The gateway config (JSON-serialisable). */
  config: { $schema?: string; servers: Record<string, Record<string, unknown>> };
  /** Variables to export before running, each with what to give it: a reference rewritten (`Bearer $TOKEN`) or a `<…>` hint, never a literal secret. */
  exports: Array<{ name: string; value: string; why: string }>;
  /** Everything else the operator must know: skipped entries, values left out. */
  notes: string[];
}

const SECRET_NAME = /(auth|token|secret|passw|pass$|api[-_]?key|apikey|key$|credential|cookie|session)/i;
const REFERENCE = /\$\{(input|env):([^}]+)\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/;
const TRANSPORTS: Record<string, string> = { stdio: 'stdio', http: 'streamableHttp', 'streamable-http': 'streamableHttp', streamableHttp: 'streamableHttp', sse: 'sse' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function variableName(...parts: string[]): string {
  const name = parts.join('_').toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return /^[A-Z_]/.test(name) ? name : `MCP_${name}`;
}

function serverName(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 48);
  return clean === '' ? 'server' : clean;
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

/** Converts one host config's text; throws `ConfigError` on a syntax error (with line and column). */
export function importMcpJson(text: string): ImportResult {
  const raw = parseConfigText(text);
  const notes: string[] = [];
  const exports: ImportResult['exports'] = [];
  if (!isRecord(raw)) throw new TypeError('the file holds no JSON object');
  const block = isRecord(raw.mcpServers) ? raw.mcpServers : isRecord(raw.servers) ? raw.servers : undefined;
  if (block === undefined) throw new TypeError('the file has no "mcpServers" or "servers" object');
  const inputs = new Map<string, { description?: string; password?: boolean }>();
  for (const input of Array.isArray(raw.inputs) ? raw.inputs : []) {
    if (isRecord(input) && typeof input.id === 'string') {
      inputs.set(input.id, { ...(typeof input.description === 'string' ? { description: input.description } : {}), password: input.password === true });
    }
  }
  const describeReference = (value: string): string => {
    const match = REFERENCE.exec(value);
    if (match === null) return '<the value>';
    if (match[1] === 'input') return `<${inputs.get(match[2]!)?.description ?? `input "${match[2]}"`}>`;
    return `$${match[2] ?? match[3]}`;
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
    const transport = type ?? (typeof entry.command === 'string' ? 'stdio' : typeof entry.url === 'string' ? 'streamableHttp' : undefined);
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
      if (args.length > 0) out.args = args;
      const kept: Record<string, string> = {};
      for (const [key, value] of Object.entries(env)) {
        if (REFERENCE.test(value) || SECRET_NAME.test(key)) {
          notes.push(
            `servers.${name}.env.${key}: left out (${REFERENCE.test(value) ? `it references ${describeReference(value)}` : 'it looks like a secret'}); stdio servers take literal env values only: set it in the config by hand, and keep that file private`,
          );
        } else kept[key] = value;
      }
      if (Object.keys(kept).length > 0) out.env = kept;
      if (entry.envFile !== undefined) notes.push(`servers.${name}.envFile: not supported; set the variables in env`);
    } else {
      const headers = stringRecord(entry.headers);
      if (typeof entry.url !== 'string' || headers === undefined) {
        notes.push(`servers.${name}: skipped (url or headers of the wrong type)`);
        continue;
      }
      out.url = entry.url;
      const literal: Record<string, string> = {};
      const fromEnv: Record<string, string> = {};
      for (const [header, value] of Object.entries(headers)) {
        const referenced = REFERENCE.test(value);
        if (!referenced && !SECRET_NAME.test(header) && !/^(bearer|basic|token)\s/i.test(value)) {
          literal[header] = value;
          continue;
        }
        const variable = variableName(name, header);
        fromEnv[header] = variable;
        exports.push({
          name: variable,
          // A literal secret is never printed back: the operator copies it from the source file.
          value: referenced ? value.replace(new RegExp(REFERENCE.source, 'g'), (m) => describeReference(m)) : `<the ${header} value from the imported file>`,
          why: `servers.${name} header ${header}`,
        });
      }
      if (Object.keys(literal).length > 0) out.headers = literal;
      if (Object.keys(fromEnv).length > 0) out.envHeaders = fromEnv;
      if (REFERENCE.test(entry.url)) notes.push(`servers.${name}.url: references ${describeReference(entry.url)}; replace it with the real URL`);
    }
    servers[name] = out;
  }
  return { config: { servers }, exports, notes };
}
