/**
 * Every agent the gateway serves, from its two sources: each loaded plugin's `agents/*.md`
 * (named `<plugin>:<agent>`) and the config's own `agents` directory (named `<agent>`). A bad
 * agent file was already reported and skipped by the reader (agents-dir.ts); here the two
 * sources are joined under one name space, in a fixed order (the gateway's directory first, then
 * plugins in load order), and each agent gets the decision that enables it.
 *
 * Enablement is a seam: {@link AgentSet.enabled} answers from the static decisions known today
 * (a plugin's or the agents directory's configured `enabled`); whoever stores per-user decisions
 * later replaces the `decide` function, and every endpoint asks on each request, never caching.
 */
import { readAgentsDir } from './agents-dir.js';
import type { PluginDiagnostic } from './diagnostics.js';
import type { LoadedPlugin } from './plugin-servers.js';
import type { AgentDeclaration } from './types.js';

export interface ServedAgent {
  readonly declaration: AgentDeclaration;
  /** The plugin that declared it; absent for the gateway's own agents directory. */
  readonly plugin?: string;
  /** The configured decision of its container (plugin entry or `agents` entry). */
  readonly containerEnabled: boolean;
}

/** Decides whether an agent is served right now (the enablement seam). */
export type AgentDecision = (agent: ServedAgent) => boolean;

/** Static decisions: the container's configured `enabled`. */
export const configuredDecision: AgentDecision = (agent) => agent.containerEnabled;

export class AgentSet {
  private readonly byName: ReadonlyMap<string, ServedAgent>;
  private decide: AgentDecision;

  constructor(
    readonly agents: readonly ServedAgent[],
    /** Problems of the gateway-level directory (each plugin keeps its own in its diagnostics). */
    readonly diagnostics: readonly PluginDiagnostic[],
    decide: AgentDecision = configuredDecision,
  ) {
    this.byName = new Map(agents.map((agent) => [agent.declaration.name, agent]));
    this.decide = decide;
  }

  get(name: string): ServedAgent | undefined {
    return this.byName.get(name);
  }

  /** Whether the agent of this name exists and is enabled now; an unknown name is not. */
  enabled(name: string): boolean {
    const agent = this.byName.get(name);
    return agent !== undefined && this.decide(agent);
  }

  /** Replaces the decision function (stored per-user decisions, when they exist). */
  decideWith(decide: AgentDecision): void {
    this.decide = decide;
  }

  /** The agents enabled now, in the set's order. */
  enabledAgents(): ServedAgent[] {
    return this.agents.filter((agent) => this.decide(agent));
  }
}

export interface AgentSources {
  /** The config's `agents` entry, its path absolute. */
  readonly agents?: { readonly path: string; readonly enabled: boolean };
  readonly plugins: readonly LoadedPlugin[];
}

/**
 * Reads the gateway's agents directory and joins it with the plugins' agents. Never throws for
 * file content. Names cannot clash across sources (a plugin agent's name holds a `:`, a
 * gateway-level one cannot), and each reader already kept names unique inside its source.
 */
export async function loadAgents(sources: AgentSources): Promise<AgentSet> {
  const own = sources.agents === undefined ? { agents: [], diagnostics: [] } : await readAgentsDir(sources.agents.path);
  const ownEnabled = sources.agents?.enabled ?? true;
  const agents: ServedAgent[] = own.agents.map((declaration) => ({ declaration, containerEnabled: ownEnabled }));
  for (const plugin of sources.plugins) {
    for (const declaration of plugin.declaration.agents) {
      agents.push({ declaration, plugin: plugin.declaration.name, containerEnabled: plugin.enabled });
    }
  }
  return new AgentSet(agents, own.diagnostics);
}
