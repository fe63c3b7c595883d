/**
 * An agent's `tools` allowlist as a predicate over the catalogue's (server, upstream name,
 * exposed name) triple — the shape of every visibility check, so the agent's endpoint lists and
 * re-checks calls with it AND-ed onto the gateway's own filter: an agent narrows, never widens.
 *
 * Entries (docs/reference.md, "Agents"):
 * - an exposed name, as the gateway lists it (`notes__add`, `dice-kit.dice__roll`);
 * - `mcp__<server>__<tool>`, the form Claude Code agents use, on the server and upstream name;
 * - `<server>__*`, every tool of that server;
 * - any other entry ending in `*`: a prefix of exposed names (`notes__*`, `dice-kit.*`).
 * An absent or empty list allows every visible tool.
 */

export type AgentToolCheck = (server: string, name: string, exposed: string) => boolean;

const allowAll: AgentToolCheck = () => true;

export function compileAgentTools(tools: readonly string[] | undefined): AgentToolCheck {
  if (tools === undefined || tools.length === 0) return allowAll;
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const entry of tools) {
    if (entry.endsWith('*')) prefixes.push(entry.slice(0, -1));
    else exact.add(entry);
  }
  const wholeServers = new Set(prefixes.filter((p) => p.endsWith('__')).map((p) => p.slice(0, -2)));
  return function agentAllows(server, name, exposed) {
    if (exact.has(exposed) || exact.has(`mcp__${server}__${name}`) || wholeServers.has(server)) return true;
    return prefixes.some((prefix) => exposed.startsWith(prefix));
  };
}
