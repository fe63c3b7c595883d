/**
 * The servers one 2025 session's client brought (routing/scopes/session-servers-scope.ts), as that
 * session sees them in its customisation list: one client plugin (`PluginCustomization` with
 * `clientId`), its children the servers with their live state. Only the session that brought
 * them is shown it; `clientId` is an opaque id of that session (a keyed hash, never the session
 * id), and nothing of a server's URL, command or headers is published.
 */
import type { SlotState } from '../upstream/slot.js';
import type { IdMinter } from './ids.js';
import { serverState } from './server-state.js';
import type { McpServerCustomization, PluginCustomization } from './types.js';

/** Where a client plugin is declared: the client's `initialize`, which has no file. */
export const SESSION_PLUGIN_URI = 'portcullis:session';

export interface BroughtServer {
  readonly name: string;
  readonly state: SlotState;
  readonly lastError: unknown;
}

/** The client plugin of session `sessionKey` (its servers in their registry's order). */
export function sessionPlugin(sessionKey: string, servers: readonly BroughtServer[], ids: Pick<IdMinter, 'idFor'>): PluginCustomization {
  const pluginKey = `client:${sessionKey}`;
  const children: McpServerCustomization[] = servers.map((server) => ({
    type: 'mcpServer',
    id: ids.idFor(`${pluginKey}#mcp=${server.name}`),
    uri: SESSION_PLUGIN_URI,
    name: server.name,
    state: serverState(server.name, server.state, server.lastError),
  }));
  return {
    type: 'plugin',
    id: ids.idFor(pluginKey),
    uri: SESSION_PLUGIN_URI,
    name: 'session',
    clientId: ids.idFor(`client#${sessionKey}`),
    load: { kind: 'loaded' },
    children,
  };
}
