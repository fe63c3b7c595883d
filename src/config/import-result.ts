/**
 * What `portcullis import` produces from any source format (a host's mcp.json, a registry
 * server.json): a gateway config whose secrets are `${env:NAME}` references (env-references.ts),
 * the variables the operator exports for them, and notes. The rules every format shares live
 * here: how a server and a variable are named, and that a variable the default policy would never
 * let the gateway read (`envHeaderNames`: cloud, CI and npm credentials, `PORTCULLIS_*`) is given
 * a name it may.
 */
import { EMBEDDED_DEFAULT_POLICY } from '../policy/policy-load.js';
import { compilePolicyRules } from '../policy/policy-rules.js';
import { reservedServerName } from './server-schema.js';

export interface ImportResult {
  /** The gateway config (JSON-serialisable). */
  config: { $schema?: string; servers: Record<string, Record<string, unknown>> };
  /** Variables to export before running, each with what to give it (a `<…>` hint), never a literal secret. */
  exports: ImportExport[];
  /** Everything else the operator must know: skipped entries, values to replace. */
  notes: string[];
}

export interface ImportExport {
  name: string;
  /** A hint in angle brackets (`<GitHub token>`); never a value from the imported file. */
  value: string;
  /** The fields that read it (`servers.github header Authorization`). */
  why: string;
}

/** Names that look like credentials: their literal values never stay in the output. */
export const SECRET_NAME = /(auth|token|secret|passw|pass$|api[-_]?key|apikey|key$|credential|cookie|session)/i;

const defaultRules = compilePolicyRules(EMBEDDED_DEFAULT_POLICY);

/**
 * A config key from a source's name: the schema's 1-48 characters of letters, digits, "_", "." or
 * "-", and never a name every JavaScript object has (`constructor` becomes `constructor-server`).
 */
export function serverName(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 48);
  if (clean === '') return 'server';
  return reservedServerName(clean) ? `${clean.slice(0, 41)}-server` : clean;
}

/** An environment variable name from parts: `variableName('github', 'X-Api-Key')` is `GITHUB_X_API_KEY`. */
export function variableName(...parts: string[]): string {
  const name = parts.join('_').toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return /^[A-Z_]/.test(name) ? name : `MCP_${name}`;
}

/**
 * The variables one import asks the operator to export, each once (two fields may read the same
 * one: an input used by two servers). `use` returns the `${env:NAME}` text to write.
 */
export class ImportVariables {
  readonly exports: ImportExport[] = [];

  /**
   * `wanted` is the source's own name for the variable when it has one (`${env:GITHUB_TOKEN}`,
   * a registry `environmentVariables` name); a name the default policy would refuse to read is
   * prefixed with the server's (`NPM_TOKEN` → `MYSERVER_NPM_TOKEN`).
   */
  use(wanted: string, server: string, hint: string, why: string): string {
    const name = defaultRules.envHeaderAllowed(wanted) ? wanted : variableName(server, wanted);
    const known = this.exports.find((e) => e.name === name);
    if (known === undefined) this.exports.push({ name, value: hint, why });
    else if (!known.why.split(', ').includes(why)) known.why = `${known.why}, ${why}`;
    return `\${env:${name}}`;
  }
}
