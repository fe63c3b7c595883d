/**
 * `mcpApp` of a server that serves MCP Apps (it advertises `io.modelcontextprotocol/ui`): what
 * its side channel proxies, so a host can run the server's Apps against that channel. It lists
 * exactly what the side channel declares to its clients: `serverTools` and `serverResources`
 * when the upstream has tools or resources, with `listChanged: true` (the gateway relays list
 * changes itself, whatever the upstream declared), and `logging` (relayed for every server).
 * Sampling is not offered: the side channel relays no server→client request a host did not
 * make through it.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/server';
import { uiExtensionOf } from '../catalogue/merge.js';
import type { McpAppInfo } from './types.js';

export function mcpAppOf(capabilities: ServerCapabilities | undefined): McpAppInfo | undefined {
  if (uiExtensionOf(capabilities) === undefined) return undefined;
  return {
    capabilities: {
      ...(capabilities?.tools === undefined ? {} : { serverTools: { listChanged: true } }),
      ...(capabilities?.resources === undefined ? {} : { serverResources: { listChanged: true } }),
      logging: {},
    },
  };
}
