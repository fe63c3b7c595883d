/**
 * What an endpoint tells a client it is (the `initialize` / `server/discover` answer): the
 * gateway's name and version, the capabilities merged from the primaries that are up right now,
 * and the instructions — for a side channel its one server's, for the aggregate the gateway's
 * own followed by each upstream's.
 *
 * Built per caller: a server the caller's access view hides (policy/access-view.ts) lends the
 * answer neither its instructions nor its prompt, resource, completion or logging capabilities.
 * Tool capabilities (tools, tool tasks, MCP Apps) come from every server, since rules may show a
 * caller single tools of a server they do not name; they name no server.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/server';
import { mergeCapabilities, mergeInstructions } from '../catalogue/merge.js';
import { primaryInfo, type PrimaryInfo, type ServedInstructions } from '../routing/primaries.js';
import { mergeTaskCapability, TASKS_EXTENSION } from '../routing/tasks/task-capabilities.js';
import type { ScopeOptions } from '../routing/scopes/scope-options.js';
import type { Era } from '../rpc/era.js';
import { reachesPerUserServer } from '../routing/scopes/session-credentials.js';
import type { AccessView } from '../policy/access-view.js';

export interface EndpointIdentity {
  name: string;
  version: string;
  capabilities: ServerCapabilities;
  instructions: string | undefined;
}

export interface IdentitySource {
  registry: ScopeOptions['registry'];
  servers: ScopeOptions['servers'];
  /** Each server's instructions as clients are shown them (tool integrity's pinned text); absent: the upstream's own. */
  served?: ServedInstructions | undefined;
  name: string;
  version: string;
  /** The gateway's own instructions (persona text), placed before each upstream's. */
  instructions: string | undefined;
  /** The endpoint tracks tasks (routing/tasks/): offered when some upstream takes tool tasks. */
  tasks: boolean;
  /** The endpoint serves resources of its own (the customisation list): subscribed to at the gateway. */
  gatewayResources?: boolean;
  /** The instructions from the upstreams' (the persona and labels: endpoint-extras.ts); default: merged after `instructions`. */
  instructionsFor?: (parts: readonly PrimaryInfo[]) => string | undefined;
  /**
   * The endpoint's own prompts and resources (routing/gateway-entries.ts: the agents' prompts,
   * `portcullis://agents`): declared even when no upstream has any, or clients never list them.
   */
  ownEntries?: { prompts: boolean; resources: boolean };
}

export function endpointIdentity(source: IdentitySource, era: Era, view: AccessView): EndpointIdentity {
  const every = primaryInfo(source.registry, source.servers.names, source.served);
  const parts = view.shownServers(every);
  const capabilities = mergeCapabilities(parts);
  if (parts !== every) {
    const tools = mergeCapabilities(every);
    if (tools.tools === undefined) delete capabilities.tools;
    else capabilities.tools = tools.tools;
    if (tools.extensions === undefined) delete capabilities.extensions;
    else capabilities.extensions = tools.extensions;
  }
  const own = source.ownEntries;
  if (own?.prompts === true) capabilities.prompts = { ...capabilities.prompts, listChanged: true };
  if (own?.resources === true) capabilities.resources = { ...capabilities.resources, listChanged: true };
  // The gateway relays logging and list changes itself, whatever each upstream declared.
  capabilities.logging = {};
  // A per-user server shows what it serves only once a session's token reaches it: a 2025
  // session is told of all three lists, so it hears them change when it authenticates.
  const perUser = era === '2025' && reachesPerUserServer(source.registry, source.servers.names);
  for (const key of ['tools', 'prompts', 'resources'] as const) {
    if (capabilities[key] !== undefined || perUser) capabilities[key] = { ...capabilities[key], listChanged: true };
  }
  // Resources of its own (the customisation list) are served, and subscribed to, by the gateway.
  if (source.gatewayResources === true) capabilities.resources = { ...capabilities.resources, subscribe: true, listChanged: true };
  // Tasks: the 2025 capability or the 2026 extension, when some upstream takes tool tasks.
  const tasks = source.tasks ? mergeTaskCapability(every) : undefined;
  if (tasks !== undefined && era === '2025') capabilities.tasks = tasks;
  if (tasks !== undefined && era === '2026') capabilities.extensions = { ...capabilities.extensions, [TASKS_EXTENSION]: {} };
  const instructions =
    source.instructionsFor?.(parts) ??
    (source.servers.names.length === 1 ? (parts[0]?.instructions ?? source.instructions) : mergeInstructions(source.instructions, parts));
  return { name: source.name, version: source.version, capabilities, instructions };
}
