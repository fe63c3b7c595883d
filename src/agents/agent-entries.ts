/**
 * The agents as the aggregate endpoint offers them (routing/gateway-entries.ts): a prompt
 * `agent:<name>` for each enabled agent a user may invoke, and the `portcullis://agents`
 * resource — the `AgentCustomization`s of the customisation list (same ids), each with
 * `enabled: false` when it is not served now (its own decision or its plugin's).
 */
import type { AgentCustomization, Customization } from '../customizations/types.js';
import type { VisibilityFilter } from '../catalogue/merge.js';
import type { AgentSet, ServedAgent } from '../plugins/agent-set.js';
import { compileAgentTools, type AgentToolCheck } from '../policy/agent-tools.js';
import type { AgentPrompt } from '../routing/gateway-entries.js';

export function agentPrompts(set: AgentSet): AgentPrompt[] {
  return set
    .enabledAgents()
    .filter((agent) => agent.declaration.disableUserInvocation !== true)
    .map(({ declaration }) => ({
      name: declaration.name,
      ...(declaration.description === undefined ? {} : { description: declaration.description }),
      body: declaration.body,
    }));
}

/**
 * Whether agent `name` offers a tool (its `tools` allowlist, policy/agent-tools.ts), compiled
 * once per agent; an unknown agent offers nothing.
 */
export function agentOffers(set: AgentSet): (agent: string, server: string, name: string, exposed: string) => boolean {
  const compiled = new WeakMap<object, AgentToolCheck>();
  return (agent, server, name, exposed) => {
    const served = set.get(agent);
    if (served === undefined) return false;
    let check = compiled.get(served);
    if (check === undefined) {
      check = compileAgentTools(served.declaration.tools);
      compiled.set(served, check);
    }
    return check(server, name, exposed);
  };
}

/**
 * Every agent item of a customisation list (top level and plugin children) that `shown` keeps
 * (the caller's view, routing/gateway-entries.ts), in list order.
 */
export function agentItems(items: readonly Customization[], set: AgentSet, shown: (agent: string) => boolean = () => true): AgentCustomization[] {
  const out: AgentCustomization[] = [];
  const add = (item: AgentCustomization) => {
    if (!shown(item.name)) return;
    const { enabled: _own, ...rest } = item;
    out.push(set.enabled(item.name) ? rest : { ...rest, enabled: false });
  };
  for (const item of items) {
    if (item.type === 'agent') add(item);
    else if (item.type === 'plugin') for (const child of item.children ?? []) if (child.type === 'agent') add(child);
  }
  return out;
}

/*
 * What an agent's endpoint is built from: the gateway's visibility filter AND the agent's `tools`
 * allowlist (policy/agent-tools.ts), the agent's body as instructions, its name as `serverInfo`,
 * its `model` in the handshake `_meta`. One predicate serves `tools/list` and the re-check of
 * every `tools/call` (the catalogue's), so a tool outside the list answers exactly like an
 * unknown tool, and search and `call_tool` (deferral) see only what the agent may use.
 */
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
