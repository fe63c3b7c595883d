/**
 * MCP Apps (`io.modelcontextprotocol/ui`) through a real gateway, driven by the SDK's real Client
 * in both eras: two real stdio upstreams serving Apps under the same `ui://` URIs. The first keeps
 * its URIs; the second's are rewritten (still `ui://`) the same way in tool lists, call results
 * and `resources/list`, and reads of either URI reach the right upstream, whose contents come
 * back under the URI the client asked for. Everything else of `_meta.ui` passes intact; the
 * extension is advertised only when an upstream advertises it; the customisation list gives an
 * Apps server `mcpApp.capabilities` exactly as its side channel declares them.
 */
import { realpathSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { connectClient, ERAS, textOf } from '../integration/harness/clients.js';
import { Cleanup, waitUntil } from '../integration/harness/wait.js';
import { fixture } from '../plugins/plugin-test-helpers.js';
import { startPluginGateway } from './plugin-test-gateway.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

const APPS = realpathSync(fixture('../apps/apps-server.mjs'));
const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';

const appsServer = (label: string, ...flags: string[]) => ({ transport: 'stdio', command: process.execPath, args: [APPS, label, ...flags], isolation: 'shared' });

type Item = Record<string, any>;

async function gatewayWith(servers: Record<string, unknown>) {
  const { gateway } = await startPluginGateway(cleanup, { servers });
  const names = Object.keys(servers);
  await waitUntil(async () => {
    const items = ((await (await fetch(`${gateway.url}/customizations`)).json()) as { items: Item[] }).items;
    return names.every((name) => items.find((i) => i.name === name)?.state.kind === 'ready');
  }, 'upstreams ready');
  return gateway;
}

describe.each(ERAS)('MCP Apps through the gateway (%s client)', (era) => {
  it('rewrites a ui:// URI two servers share for the second, consistently in lists, calls and reads', async () => {
    const gateway = await gatewayWith({ alpha: appsServer('alpha'), beta: appsServer('beta') });
    const { client } = await connectClient(cleanup, gateway.url, era);
    expect(client.getServerCapabilities()?.extensions?.[UI]).toEqual({ mimeTypes: [MIME] });

    const { tools } = await client.listTools();
    const tool = (name: string) => tools.find((t) => t.name === name)!;
    expect(tool('alpha__show')._meta).toEqual({ ui: { resourceUri: 'ui://dashboard/main.html', visibility: ['model', 'app'] }, 'alpha/kept': true });
    expect(tool('beta__show')._meta).toEqual({ ui: { resourceUri: 'ui://beta/dashboard/main.html', visibility: ['model', 'app'] }, 'beta/kept': true });
    expect(tool('alpha__widget')._meta).toEqual({ 'ui/resourceUri': 'ui://widget' });
    expect(tool('beta__widget')._meta).toEqual({ 'ui/resourceUri': 'ui://beta/widget' });
    expect(tool('beta__plain')._meta).toBeUndefined();

    const { resources } = await client.listResources();
    // The gateway's own `portcullis://` resources aside, the upstreams' as rewritten.
    expect(resources.map((r) => r.uri).filter((uri) => !uri.startsWith('portcullis://')).sort()).toEqual(['note://alpha/plain', 'note://beta/plain', 'ui://beta/dashboard/main.html', 'ui://dashboard/main.html']);
    expect(resources.find((r) => r.uri === 'ui://beta/dashboard/main.html')).toMatchObject({ mimeType: MIME, _meta: { ui: { prefersBorder: true } } });

    // Each call result names the App as its tool's listing does.
    const called = await client.callTool({ name: 'beta__show', arguments: {} });
    expect(textOf(called)).toBe('beta show');
    expect(called._meta).toMatchObject({ ui: { resourceUri: 'ui://beta/dashboard/main.html' } });
    expect((await client.callTool({ name: 'alpha__show', arguments: {} }))._meta).toMatchObject({ ui: { resourceUri: 'ui://dashboard/main.html' } });

    // Reads route back to the owner, with the URI the owner knows; contents carry the exposed one.
    for (const [uri, text] of [
      ['ui://dashboard/main.html', 'alpha dashboard'],
      ['ui://beta/dashboard/main.html', 'beta dashboard'],
      ['ui://widget', 'alpha widget'],
      ['ui://beta/widget', 'beta widget'],
    ] as const) {
      const read = await client.readResource({ uri });
      expect(read.contents).toHaveLength(1);
      expect(read.contents[0]).toMatchObject({ uri, mimeType: MIME, _meta: { ui: { prefersBorder: true, csp: { connectDomains: [] } } } });
      expect((read.contents[0] as { text: string }).text).toContain(text);
    }
  });

  it('passes a single server\'s Apps through untouched and advertises nothing without an Apps upstream', async () => {
    const gateway = await gatewayWith({ alpha: appsServer('alpha'), plain: appsServer('plain', '--no-apps') });
    const { client } = await connectClient(cleanup, gateway.url, era);
    const { tools } = await client.listTools();
    // `plain` does not advertise Apps: its lists pass as they are, never rewritten.
    expect(tools.find((t) => t.name === 'plain__show')!._meta).toMatchObject({ ui: { resourceUri: 'ui://dashboard/main.html' } });
    expect(tools.find((t) => t.name === 'alpha__show')!._meta).toMatchObject({ ui: { resourceUri: 'ui://dashboard/main.html' } });
    expect((await client.readResource({ uri: 'ui://widget' })).contents[0]).toMatchObject({ uri: 'ui://widget' });

    const without = await gatewayWith({ plain: appsServer('plain', '--no-apps') });
    const { client: other } = await connectClient(cleanup, without.url, era);
    expect(other.getServerCapabilities()?.extensions?.[UI]).toBeUndefined();
  });
});

describe('mcpApp in the customisation list', () => {
  it('lists exactly what an Apps server\'s side channel declares, and nothing for other servers', async () => {
    const gateway = await gatewayWith({ alpha: appsServer('alpha'), plain: appsServer('plain', '--no-apps') });
    const items = ((await (await fetch(`${gateway.url}/customizations`)).json()) as { items: Item[] }).items;
    const alpha = items.find((i) => i.name === 'alpha')!;
    expect(alpha.mcpApp).toEqual({ capabilities: { serverTools: { listChanged: true }, serverResources: { listChanged: true }, logging: {} } });
    expect(items.find((i) => i.name === 'plain')!.mcpApp).toBeUndefined();

    // The side channel itself declares the same: tools and resources with list changes, logging.
    const { client } = await connectClient(cleanup, alpha.channel, '2025');
    const declared = client.getServerCapabilities()!;
    expect({ tools: declared.tools?.listChanged, resources: declared.resources?.listChanged, logging: declared.logging }).toEqual({ tools: true, resources: true, logging: {} });
    expect(declared.extensions?.[UI]).toEqual({ mimeTypes: [MIME] });
    expect(declared.prompts).toBeUndefined();
  });
});
