/**
 * What an agent's endpoint is built from: the gateway's visibility filter AND the agent's `tools`
 * allowlist (policy/agent-tools.ts), the agent's body as instructions, its name as `serverInfo`,
 * its `model` in the handshake `_meta`. One predicate serves `tools/list` and the re-check of
 * every `tools/call` (the catalogue's), so a tool outside the list answers exactly like an
 * unknown tool, and search and `call_tool` (deferral) see only what the agent may use.
 */
import type { VisibilityFilter } from '../catalogue/merge.js';
import { compileAgentTools } from '../policy/agent-tools.js';
import type { ServedAgent } from '../plugins/agent-set.js';

/** `_meta` key of the agent's model in its endpoint's handshake result. */
export const AGENT_MODEL_META = 'portcullis/model';

export function agentToolFilter(gateway: VisibilityFilter, agent: ServedAgent): VisibilityFilter {
  const allows = compileAgentTools(agent.declaration.tools);
  return (server, name, exposed) => gateway(server, name, exposed) && allows(server, name, exposed);
}

/** The agent's part of its endpoint's handshake `_meta`. */
export function agentMeta(agent: ServedAgent): Record<string, unknown> {
  return agent.declaration.model === undefined ? {} : { [AGENT_MODEL_META]: agent.declaration.model };
}
