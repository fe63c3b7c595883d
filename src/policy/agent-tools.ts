/**
 * An agent's `tools` allowlist as a predicate over the catalogue's (server, upstream name,
 * exposed name) triple — the shape of every visibility check, so the agent's endpoint lists and
 * re-checks calls with it AND-ed onto the gateway's own filter: an agent narrows, never widens.
 *
 * Entries (docs/reference.md, "Agents"):
 * - an exposed name, as the gateway lists it (`notes__add`, `dice-kit.dice__roll`);
 * - `mcp__<server>__<tool>`, the form Claude Code agents use, on the server and upstream name;
 * - `<server>__*`, every tool of that server;
 * - `<server>__<prefix>*`, the tools of that server whose name starts with `<prefix>`;
 * - any other entry ending in `*`: a prefix of server names that stops at a namespace boundary —
 *   `dice-kit.*` covers every server of the plugin `dice-kit` (`dice-kit.dice`), and never a
 *   server of a plugin whose name merely starts with `dice-kit.` (`dice-kit.evil.x`): the text a
 *   prefix leaves to match may not hold a `.`, so it never reaches into a deeper namespace.
 *   Plugin names may contain dots (Agent Plugins 1.0 §5.5); plugin server names may not
 *   (docs/plugins.md), which is what makes the boundary unambiguous.
 * An absent or empty list, or the entry `*`, allows every visible tool.
 */

export type AgentToolCheck = (server: string, name: string, exposed: string) => boolean;

const allowAll: AgentToolCheck = () => true;

/** The separator of the Claude Code form and of server globs, whatever the gateway's own. */
const TOOL_SEPARATOR = '__';

/** True when `server` is `prefix` followed by text that stays inside one namespace (no `.`). */
function serverPrefixMatches(prefix: string, server: string): boolean {
  return server.startsWith(prefix) && !server.slice(prefix.length).includes('.');
}

export function compileAgentTools(tools: readonly string[] | undefined): AgentToolCheck {
  if (tools === undefined || tools.length === 0 || tools.includes('*')) return allowAll;
  const exact = new Set<string>();
  /** Stems holding the separator: `<server>__<tool prefix>`, matched per server. */
  const toolPrefixes: string[] = [];
  /** Stems without it: prefixes of server names, bounded by namespaces. */
  const serverPrefixes: string[] = [];
  for (const entry of tools) {
    if (!entry.endsWith('*')) exact.add(entry);
    else if (entry.includes(TOOL_SEPARATOR)) toolPrefixes.push(entry.slice(0, -1));
    else serverPrefixes.push(entry.slice(0, -1));
  }
  return function agentAllows(server, name, exposed) {
    if (exact.has(exposed) || exact.has(`mcp${TOOL_SEPARATOR}${server}${TOOL_SEPARATOR}${name}`)) return true;
    if (serverPrefixes.some((prefix) => serverPrefixMatches(prefix, server))) return true;
    // The tool part is judged on the upstream name under this server, so a prefix never spans into
    // another server whose name happens to continue the text (`notes__*` is not `notes__x`'s).
    const canonical = `${server}${TOOL_SEPARATOR}${name}`;
    return toolPrefixes.some((prefix) => prefix.startsWith(`${server}${TOOL_SEPARATOR}`) && canonical.startsWith(prefix));
  };
}
