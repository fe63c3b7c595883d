/**
 * Data mode `tools` (init option `dataMode`, config `catalogue.dataMode`): for clients that
 * support tools only, every server with resources also gets two tools on the gateway,
 * `<server>__list_resources` and `<server>__read_resource`, that answer from the very lists and
 * reads the client could have made (the same catalogue, the same routing, the same policy).
 *
 * A name an upstream already uses in the catalogue stays the upstream's: the data tool is not
 * added (and its calls go to the upstream), so turning the mode on never renames or hides a tool.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { GatewayError } from '../errors.js';
import { routeResourceUri } from '../catalogue/build-index.js';
import type { RouteScope } from './router.js';

type Result = Record<string, unknown>;

const LIST = '__list_resources';
const READ = '__read_resource';

/** The data tools of a scope: by name, the server and which of the two it is. */
export type DataTools = Map<string, { readonly server: string; readonly kind: 'list' | 'read'; readonly tool: Tool }>;

function toolsOf(server: string): Array<[string, { server: string; kind: 'list' | 'read'; tool: Tool }]> {
  const list = `${server}${LIST}`;
  const read = `${server}${READ}`;
  return [
    [list, { server, kind: 'list', tool: { name: list, description: `Lists the resources of "${server}" (uri, name, mimeType)`, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } } }],
    [
      read,
      {
        server,
        kind: 'read',
        tool: {
          name: read,
          description: `Reads one resource of "${server}" by its URI`,
          inputSchema: { type: 'object', properties: { uri: { type: 'string', description: 'the resource URI' } }, required: ['uri'] },
          annotations: { readOnlyHint: true },
        },
      },
    ],
  ];
}

/** The data tools for the servers that list resources or templates now, minus names upstreams hold. */
export async function dataToolsOf(scope: RouteScope): Promise<DataTools> {
  const [resources, templates, tools] = await Promise.all([scope.catalogue.resources(), scope.catalogue.templates(), scope.catalogue.tools()]);
  const servers = new Set<string>([...resources.index.values(), ...templates.routes.map((route) => route.server)]);
  const out: DataTools = new Map();
  for (const server of scope.servers) {
    if (!servers.has(server)) continue;
    for (const [name, entry] of toolsOf(server)) if (!tools.index.has(name)) out.set(name, entry);
  }
  return out;
}

/** Runs one data tool: a list filtered to its server, or a read of a URI that server owns. */
export async function callDataTool(
  scope: RouteScope,
  entry: { server: string; kind: 'list' | 'read' },
  args: Record<string, unknown>,
  route: (method: string, params: Record<string, unknown>) => Promise<Result>,
): Promise<Result> {
  if (entry.kind === 'list') {
    const { resources, index } = await scope.catalogue.resources();
    const own = resources.filter((resource) => index.get(resource.uri) === entry.server);
    const { resourceTemplates, routes } = await scope.catalogue.templates();
    const templates = resourceTemplates.filter((_t, i) => routes[i]?.server === entry.server);
    const listed = { resources: own, ...(templates.length === 0 ? {} : { resourceTemplates: templates }) };
    return { content: [{ type: 'text', text: JSON.stringify(listed) }], structuredContent: listed };
  }
  const uri = args.uri;
  if (typeof uri !== 'string') throw new GatewayError('INVALID_PARAMS', `"uri" of ${entry.server}${READ} must be a string`);
  const [resources, templates] = await Promise.all([scope.catalogue.resources(), scope.catalogue.templates()]);
  // Only what this server owns: the tool is the server's, not a way to read another's.
  if (routeResourceUri(uri, resources.index, templates.routes) !== entry.server) throw new GatewayError('UNKNOWN_RESOURCE', `Resource not found: ${uri}`, { data: { uri } });
  const read = await route('resources/read', { uri });
  const contents = Array.isArray(read.contents) ? (read.contents as Array<Record<string, unknown>>) : [];
  return { content: contents.map((resource) => ({ type: 'resource', resource })) };
}
