/**
 * The banner a person at a terminal sees under the Ready line: where the gateway serves MCP, the
 * admin page and the metrics, and a snippet to paste into Claude Desktop, Cursor or VS Code.
 * Claude Desktop's config file takes commands only, so it reaches the URL through `mcp-remote`;
 * Cursor and VS Code take the URL. The Ready line itself is not part of it and never changes.
 */

export interface BannerInput {
  /** The canonical MCP URL (the Ready line's). */
  mcpUrl: string;
  version: string;
  servers: readonly string[];
}

/** The URLs beside the MCP endpoint: the admin page at `<path>/admin`, metrics at `/metrics` of the origin. */
export function gatewayUrls(mcpUrl: string): { mcp: string; admin: string; metrics: string } {
  const url = new URL(mcpUrl);
  return { mcp: mcpUrl, admin: `${mcpUrl.replace(/\/+$/, '')}/admin`, metrics: `${url.origin}/metrics` };
}

/** The banner text, ending in a newline. */
export function startBanner(input: BannerInput): string {
  const urls = gatewayUrls(input.mcpUrl);
  const url = JSON.stringify(input.mcpUrl);
  const servers = input.servers.length === 0 ? 'no servers yet' : `${input.servers.length} server(s): ${input.servers.join(', ')}`;
  return [
    '',
    `Portcullis ${input.version}, ${servers}`,
    `  MCP URL     ${urls.mcp}`,
    `  Admin page  ${urls.admin}`,
    `  Metrics     ${urls.metrics}`,
    '',
    'Connect a client (paste into its config):',
    `  Claude Desktop  { "mcpServers": { "portcullis": { "command": "npx", "args": ["-y", "mcp-remote", ${url}] } } }`,
    `  Cursor          { "mcpServers": { "portcullis": { "url": ${url} } } }`,
    `  VS Code         { "servers": { "portcullis": { "type": "http", "url": ${url} } } }`,
    '',
    'Ctrl-C stops the gateway and every server it started.',
    '',
  ].join('\n');
}
