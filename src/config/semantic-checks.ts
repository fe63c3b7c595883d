/**
 * Checks on a schema-valid config that a schema cannot express. Each problem names the server
 * and field and never echoes the offending value (URLs and commands may hold secrets).
 */
import { checkUpstreamUrl } from '../policy/upstream-url.js';
import type { GatewayConfigFile, ServerConfig } from './schema.js';

/** Header values go on the wire verbatim: CR/LF would split headers, NUL is never valid. */
const UNSAFE_HEADER_VALUE = /[\r\n\0]/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function semanticProblems(config: Pick<GatewayConfigFile, 'servers'>): string[] {
  return Object.entries(config.servers).flatMap(([name, server]) => serverProblems(name, server));
}

/** Problems of one schema-valid server entry (also run on valid entries of an invalid config). */
export function serverProblems(name: string, server: ServerConfig): string[] {
  const problems: string[] = [];
  const at = `servers.${name}`;
  if (server.transport !== 'stdio') {
    const url = checkUpstreamUrl(server.url);
    if (!url.ok) problems.push(`${at}.url: ${url.message}`);
    for (const [header, value] of Object.entries(server.headers)) {
      if (!HEADER_NAME.test(header)) problems.push(`${at}.headers: a header name is not a valid HTTP token`);
      if (UNSAFE_HEADER_VALUE.test(value)) problems.push(`${at}.headers.${header}: value contains CR, LF or NUL`);
    }
    for (const [header, variable] of Object.entries(server.envHeaders)) {
      if (!HEADER_NAME.test(header)) problems.push(`${at}.envHeaders: a header name is not a valid HTTP token`);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
        problems.push(`${at}.envHeaders.${header}: must name an environment variable`);
      }
    }
  }
  const overlap = server.enabledTools.filter((tool) => server.disabledTools.includes(tool));
  if (overlap.length > 0) {
    problems.push(`${at}.enabledTools: ${overlap.length} tool(s) also listed in disabledTools (disabledTools wins; remove one)`);
  }
  return problems;
}
