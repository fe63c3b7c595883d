/**
 * What the gateway itself adds to an endpoint's catalogue, in front of the router (router.ts
 * stays the upstreams' dispatch):
 *
 * - one prompt `agent:<name>` per agent a user may invoke, whose `prompts/get` answers the
 *   agent's system prompt, so clients with prompt pickers offer it;
 * - the resource `portcullis://agents`: the agents as `AgentCustomization`s (JSON), for hosts
 *   that delegate to sub-agents (they read `disableModelInvocation`);
 * - both as the caller sees them: an agent whose every tool the caller's access rules hide is
 *   absent from both, as its endpoint answers like an unknown agent (inbound/endpoint.ts
 *   `existsFor`); its prompt then answers like an unknown prompt;
 * - the data tools of data mode `tools` (data-tools.ts).
 *
 * The gateway's names win over an upstream's that happen to be equal (an upstream prompt or
 * resource shadowed is left out of the list and unreachable here), except data tools, which
 * yield to an upstream's tool of the same name (data-tools.ts says why).
 */
import type { Prompt, Resource } from '@modelcontextprotocol/server';
import { GatewayError } from '../errors.js';
import type { AccessProfile } from '../policy/access-policy.js';
import { accessView } from '../policy/access-view.js';
import type { InitOptions } from '../rpc/init-options.js';
import { callDataTool, dataToolsOf } from './data-tools.js';
import { routeRequest, type CallContext, type RouteScope } from './router.js';

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

export const AGENTS_RESOURCE_URI = 'portcullis://agents';
export const AGENT_PROMPT_PREFIX = 'agent:';

/** One agent as a prompt: its published name, description and system prompt. */
export interface AgentPrompt {
  readonly name: string;
  readonly description?: string;
  readonly body: string;
}

export interface GatewayEntries {
  /** The agents users may invoke now (enabled, `disableUserInvocation` not true). */
  agentPrompts?(): readonly AgentPrompt[];
  /**
   * The JSON text of `portcullis://agents` now (`{ "items": AgentCustomization[] }`), as the
   * caller's access profile sees it — the same view as its customisation list (an agent's `tools`
   * left out for a caller the rules narrow, since a tool name may belong to a hidden server).
   */
  agentsResource?(access: AccessProfile | undefined, shown: (agent: string) => boolean): string;
  /** Whether the agent `name` offers the aggregate tool `exposed` of `server` (its `tools` allowlist). */
  agentOffers?(agent: string, server: string, name: string, exposed: string): boolean;
  /** The data mode when the client chose none (config `catalogue.dataMode`). */
  readonly dataMode: 'resources' | 'tools';
}

const AGENTS_RESOURCE: Resource = {
  uri: AGENTS_RESOURCE_URI,
  name: 'agents',
  title: 'Agents served by this gateway',
  description: 'The custom agents of this gateway as AgentCustomization objects (JSON: { "items": [...] })',
  mimeType: 'application/json',
};

function promptsOf(entries: GatewayEntries): Map<string, AgentPrompt> {
  return new Map((entries.agentPrompts?.() ?? []).map((agent) => [`${AGENT_PROMPT_PREFIX}${agent.name}`, agent]));
}

/**
 * Which agents the caller of `scope` sees: all when its rules narrow nothing; otherwise those
 * offering at least one tool of the caller's own list (the scope's catalogue is narrowed by the
 * caller's access profile), as the agent's endpoint judges it. A list that cannot be fetched
 * hides nothing more than the rules already do: such an agent stays hidden from the narrowed
 * caller until its tools can be judged.
 */
async function agentsShown(entries: GatewayEntries, scope: RouteScope): Promise<(agent: string) => boolean> {
  const offers = entries.agentOffers;
  if (offers === undefined || accessView(scope.access).seesAll) return () => true;
  const index = [...(await scope.catalogue.tools()).index];
  const memo = new Map<string, boolean>();
  return (agent) => {
    let shown = memo.get(agent);
    if (shown === undefined) {
      shown = index.some(([exposed, { server, name }]) => offers(agent, server, name, exposed));
      memo.set(agent, shown);
    }
    return shown;
  };
}

/**
 * Dispatches one request: the gateway's own entries first, everything else through the router.
 * `options` are the client's init options for this request (its session's, or this request's).
 */
export async function routeWithEntries(
  entries: GatewayEntries | undefined,
  scope: RouteScope,
  method: string,
  params: Params | undefined,
  call: CallContext,
  options: InitOptions,
): Promise<Result> {
  const next = (m: string, p: Params | undefined) => routeRequest(scope, m, p, call);
  if (entries === undefined) return next(method, params);
  const p = params ?? {};
  switch (method) {
    case 'prompts/list': {
      const agents = promptsOf(entries);
      if (agents.size === 0) return next(method, params);
      const result = await next(method, params);
      const shown = await agentsShown(entries, scope);
      const upstream = ((result.prompts as Prompt[] | undefined) ?? []).filter((prompt) => !agents.has(prompt.name));
      const own: Prompt[] = [...agents]
        .filter(([, agent]) => shown(agent.name))
        .map(([name, agent]) => ({ name, ...(agent.description === undefined ? {} : { description: agent.description }) }));
      return { ...result, prompts: [...upstream, ...own] };
    }
    case 'prompts/get': {
      const agent = typeof p.name === 'string' ? promptsOf(entries).get(p.name) : undefined;
      if (agent === undefined || !(await agentsShown(entries, scope))(agent.name)) return next(method, params);
      return {
        ...(agent.description === undefined ? {} : { description: agent.description }),
        messages: [{ role: 'user', content: { type: 'text', text: agent.body } }],
      };
    }
    case 'resources/list': {
      if (entries.agentsResource === undefined) return next(method, params);
      const result = await next(method, params);
      const upstream = ((result.resources as Resource[] | undefined) ?? []).filter((resource) => resource.uri !== AGENTS_RESOURCE_URI);
      return { ...result, resources: [...upstream, AGENTS_RESOURCE] };
    }
    case 'resources/read':
      if (entries.agentsResource === undefined || p.uri !== AGENTS_RESOURCE_URI) return next(method, params);
      return { contents: [{ uri: AGENTS_RESOURCE_URI, mimeType: 'application/json', text: entries.agentsResource(scope.access, await agentsShown(entries, scope)) }] };
    case 'tools/list': {
      if ((options.dataMode ?? entries.dataMode) !== 'tools') return next(method, params);
      const result = await next(method, params);
      if (result.nextCursor !== undefined) return result; // added once, to the last page
      const data = await dataToolsOf(scope);
      return data.size === 0 ? result : { ...result, tools: [...((result.tools as unknown[]) ?? []), ...[...data.values()].map((entry) => entry.tool)] };
    }
    case 'tools/call': {
      if ((options.dataMode ?? entries.dataMode) !== 'tools' || typeof p.name !== 'string') return next(method, params);
      const entry = (await dataToolsOf(scope)).get(p.name);
      if (entry === undefined) return next(method, params);
      const args = p.arguments ?? {};
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new GatewayError('INVALID_PARAMS', '"arguments" must be an object');
      return callDataTool(scope, entry, args as Params, (m, mp) => next(m, mp));
    }
    default:
      return next(method, params);
  }
}
