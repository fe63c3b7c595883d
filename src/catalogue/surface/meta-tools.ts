/**
 * The two tools the gateway lists in place of deferred ones: `search_tools` (find tools by what
 * they do) and `call_tool` (call any visible tool by its exposed name), and the pure checks of
 * their arguments. A bad argument is the client's error (-32602, through errors.ts), named.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { GatewayError } from '../../errors.js';
import { MAX_QUERY_LENGTH, SEARCH_LIMIT } from '../search/tool-index.js';

export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';
export const META_TOOL_NAMES: ReadonlySet<string> = new Set([SEARCH_TOOLS, CALL_TOOL]);

/** Longest `server` argument: a server name is at most 48 characters (config schema). */
const MAX_SERVER_LENGTH = 48;
/** Server names offered as an `enum` of `server` when there are at most this many. */
const MAX_SERVER_ENUM = 200;

export interface MetaToolContext {
  /**
   * Where `load` adds matches: a 2025-era session's own list (announced on its stream), a 2026-era
   * caller's (kept per principal and workspace, seen in its next `tools/list`), or nowhere (no `load`).
   */
  readonly loads: 'session' | 'caller' | undefined;
  /** Deferred servers with at least one tool the caller may see, for the `server` argument's enum. */
  readonly servers: readonly string[];
}

const LOAD_DESCRIPTION = {
  session: "Also add the matches to this session's tool list (announced with notifications/tools/list_changed), so they can be called directly.",
  caller: 'Also add the matches to your tool list (kept for you and your workspace; list tools again to see them), so they can be called directly.',
} as const;

export function metaTools({ loads, servers }: MetaToolContext): Tool[] {
  const canLoad = loads !== undefined;
  const server: Record<string, unknown> = {
    type: 'string',
    maxLength: MAX_SERVER_LENGTH,
    description: 'Only tools of this server.',
  };
  if (servers.length > 0 && servers.length <= MAX_SERVER_ENUM) server.enum = [...servers];
  const properties: Record<string, unknown> = {
    query: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_QUERY_LENGTH,
      description: 'What the tool should do, in plain words ("create a pull request from my branch"), or a tool name.',
    },
    limit: { type: 'integer', minimum: 1, maximum: SEARCH_LIMIT.max, default: SEARCH_LIMIT.default, description: 'Most matches to return.' },
    server,
  };
  if (loads !== undefined) properties.load = { type: 'boolean', default: false, description: LOAD_DESCRIPTION[loads] };
  return [
    {
      name: SEARCH_TOOLS,
      title: 'Search tools',
      description:
        'Finds tools of the connected servers that are not in your tool list, by what they do. Returns the best matches, best first, ' +
        `each with its name, description and inputSchema. Call a match with ${CALL_TOOL}${canLoad ? ', or load it and call it directly' : ''}.`,
      inputSchema: { type: 'object', properties: properties as Tool['inputSchema']['properties'], required: ['query'], additionalProperties: false },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    {
      name: CALL_TOOL,
      title: 'Call a tool',
      description: `Calls a tool found with ${SEARCH_TOOLS} by its exact name, with arguments matching its inputSchema.`,
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, description: `The tool's exact name, as ${SEARCH_TOOLS} returned it.` },
          arguments: { type: 'object', description: "The tool's arguments.", additionalProperties: true },
        },
        required: ['name'],
        additionalProperties: false,
      },
    },
  ];
}

export interface SearchArguments {
  readonly query: string;
  readonly limit: number;
  readonly server: string | undefined;
  readonly load: boolean;
}

/** The arguments of a `search_tools` call, checked; throws INVALID_PARAMS naming the argument. */
export function searchArguments(args: Record<string, unknown> | undefined): SearchArguments {
  const { query, limit = SEARCH_LIMIT.default, server, load = false, ...rest } = args ?? {};
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw invalid(`${SEARCH_TOOLS}: unknown argument "${unknown[0]?.slice(0, 64)}"`);
  if (typeof query !== 'string' || query.trim() === '') throw invalid(`${SEARCH_TOOLS}: "query" must be a non-empty string`);
  if (query.length > MAX_QUERY_LENGTH) throw invalid(`${SEARCH_TOOLS}: "query" must be at most ${MAX_QUERY_LENGTH} characters`);
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT.max) {
    throw invalid(`${SEARCH_TOOLS}: "limit" must be an integer from 1 to ${SEARCH_LIMIT.max}`);
  }
  if (server !== undefined && (typeof server !== 'string' || server.length > MAX_SERVER_LENGTH)) {
    throw invalid(`${SEARCH_TOOLS}: "server" must be a server name`);
  }
  if (typeof load !== 'boolean') throw invalid(`${SEARCH_TOOLS}: "load" must be true or false`);
  return { query, limit, server, load };
}

export interface CallArguments {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** The arguments of a `call_tool` call, checked; throws INVALID_PARAMS naming the argument. */
export function callArguments(args: Record<string, unknown> | undefined): CallArguments {
  const { name, arguments: inner = {}, ...rest } = args ?? {};
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw invalid(`${CALL_TOOL}: unknown argument "${unknown[0]?.slice(0, 64)}"`);
  if (typeof name !== 'string' || name === '') throw invalid(`${CALL_TOOL}: "name" must be a tool name`);
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) throw invalid(`${CALL_TOOL}: "arguments" must be an object`);
  return { name, arguments: inner as Record<string, unknown> };
}

function invalid(message: string): GatewayError {
  return new GatewayError('INVALID_PARAMS', message);
}
