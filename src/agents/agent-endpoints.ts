/**
 * Agent endpoints, `<path>/agents/<name>` (the namespaced name as one path segment): one full MCP
 * endpoint of both eras per agent, built on its first request and kept, whose catalogue is the
 * agent's `tools` allowlist AND-ed onto everything the gateway already hides (agent-entries.ts).
 *
 * Enablement is asked on every request (the agent set's seam), never cached: an agent disabled
 * now answers 404 exactly like an unknown one, whatever sessions it had. Its endpoint is kept
 * (its sessions stay until they expire or close) and serves again once the agent is enabled.
 */
import type { McpEndpoint, Open2026 } from '../inbound/endpoint.js';
import type { AgentSet, ServedAgent } from '../plugins/agent-set.js';

export class AgentEndpoints {
  private readonly built = new Map<string, McpEndpoint>();

  constructor(
    private readonly set: AgentSet,
    private readonly build: (agent: ServedAgent) => McpEndpoint,
  ) {}

  /** Whether an enabled agent of this name is served now (no endpoint is built to answer). */
  has(name: string): boolean {
    return this.set.enabled(name);
  }

  /** The endpoint of an enabled agent; undefined for an unknown or disabled one. */
  get(name: string): McpEndpoint | undefined {
    const agent = this.set.get(name);
    if (agent === undefined || !this.set.enabled(name)) return undefined;
    let endpoint = this.built.get(name);
    if (endpoint === undefined) {
      endpoint = this.build(agent);
      this.built.set(name, endpoint);
    }
    return endpoint;
  }

  /** Live 2025-era sessions over every agent endpoint built so far. */
  get sessionCount(): number {
    let count = 0;
    for (const endpoint of this.built.values()) count += endpoint.sessionCount;
    return count;
  }

  /** 2026-era listens and calls open over every agent endpoint built so far. */
  get open2026(): Open2026 {
    let listens = 0;
    let calls = 0;
    for (const endpoint of this.built.values()) {
      listens += endpoint.open2026.listens;
      calls += endpoint.open2026.calls;
    }
    return { listens, calls };
  }

  async close(): Promise<void> {
    await Promise.all([...this.built.values()].map((endpoint) => endpoint.close()));
    this.built.clear();
  }
}
