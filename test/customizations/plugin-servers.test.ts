/**
 * Plugins wired into a real gateway: their servers join the catalogue as `<plugin>.<server>`,
 * run with PLUGIN_ROOT / PLUGIN_DATA under the gateway's state directory, and are the least
 * trusted layer — the policy's `plugins.stdio`, command, env and cwd rules apply, they never reach
 * a private network, a config server keeps a name a plugin also claims, and one refused or
 * escaping server never stops the plugin's others.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { loadPlugins } from '../../src/plugins/plugin-servers.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { connectClient, ERAS, sideChannelUrl, textOf } from '../integration/harness/clients.js';
import { Cleanup, waitUntil } from '../integration/harness/wait.js';
import { agentPlugin, tempDir } from '../plugins/plugin-test-helpers.js';
import { startPluginGateway, WHEREAMI, whereamiEntry, writePlugin } from './plugin-test-gateway.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

const toolNames = async (url: string, era: '2025' | '2026') => {
  const { client } = await connectClient(cleanup, url, era);
  return (await client.listTools()).tools.map((t) => t.name);
};

describe.each(ERAS)('plugin servers seen by a %s client', (era) => {
  it('joins the catalogue as <plugin>.<server> and runs with PLUGIN_ROOT and PLUGIN_DATA', async () => {
    const dir = writePlugin('acme', { where: whereamiEntry({ env: { DATA_DIR: '${PLUGIN_DATA}/x' } }) });
    const { gateway, stateDir } = await startPluginGateway(cleanup, { plugins: [dir] });
    const { client } = await connectClient(cleanup, gateway.url, era);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['acme.where__whereami']);
    const report = JSON.parse(textOf(await client.callTool({ name: 'acme.where__whereami', arguments: {} }))) as Record<string, unknown>;
    const data = path.join(stateDir, 'plugin-data', 'acme');
    expect(report).toMatchObject({ PLUGIN_ROOT: realpathSync(dir), PLUGIN_DATA: data, DATA_DIR: `${data}/x`, cwd: realpathSync(dir) });
  });

  it('serves a plugin server whose catalogue name is longer than a config key on its side channel', async () => {
    const plugin = `p${'l'.repeat(60)}`;
    const server = `s${'v'.repeat(46)}`;
    // A directory of its own to scan (the system temp directory holds other runs' plugins, and
    // only the first 256 entries of a plugin directory are read).
    const parent = tempDir('portcullis-plugins-');
    agentPlugin(path.join(parent, 'long'), plugin, { [server]: whereamiEntry() });
    const { gateway } = await startPluginGateway(cleanup, { pluginDirs: [parent] });
    const name = `${plugin}.${server}`;
    expect(name.length).toBeGreaterThan(48);
    expect(await toolNames(sideChannelUrl(gateway.url, name), era)).toEqual(['whereami']);
    // The aggregate name is shortened deterministically (the catalogue's 64-character rule), and callable.
    const [exposed] = await toolNames(gateway.url, era);
    expect(exposed!.length).toBeLessThanOrEqual(64);
    const { client } = await connectClient(cleanup, gateway.url, era);
    expect(textOf(await client.callTool({ name: exposed!, arguments: {} }))).toContain('PLUGIN_ROOT');
  });
});

describe('plugins as the least trusted layer', () => {
  it('refuses stdio plugin servers under the strict policy and still starts', async () => {
    const dir = writePlugin('acme', { where: whereamiEntry() });
    const { gateway } = await startPluginGateway(cleanup, { plugins: [dir], policy: 'strict' });
    expect(await toolNames(gateway.url, '2025')).toEqual([]);
  });

  it('reports the plugins.stdio refusal as a degraded load naming plugin, server and field', async () => {
    const dir = writePlugin('acme', { where: whereamiEntry() });
    const config = parseConfig({ servers: {}, plugins: [dir], stateDir: tempDir(), policy: 'strict' });
    const loaded = await loadPlugins(config);
    const [plugin] = loaded.plugins;
    expect(plugin!.servers.map((s) => [s.declaration.name, s.runs])).toEqual([['acme.where', false]]);
    expect(plugin!.load).toEqual({ kind: 'degraded', message: 'plugin "acme", server "where", field type: stdio servers from plugins are not allowed by the policy (plugins.stdio is false)' });
    expect(loaded.servers).toEqual({});
  });

  it('applies the policy env, command and cwd rules, letting the gateway-set PLUGIN_ROOT/PLUGIN_DATA through', async () => {
    const dir = writePlugin(
      'acme',
      {
        plain: whereamiEntry({ env: { LANG: 'C' } }),
        secretenv: whereamiEntry({ env: { NODE_OPTIONS: '--require /tmp/evil.js' } }),
        unlisted: whereamiEntry({ env: { DATA_DIR: '${PLUGIN_DATA}' } }),
        ownbin: { type: 'stdio', command: './bin/run', args: [] },
        elsewhere: whereamiEntry({ cwd: '${PLUGIN_DATA}' }),
      },
      { 'bin/run': { executable: '#!/bin/sh\nexit 0\n' } },
    );
    const policyDir = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(policyDir, 'p.json'), JSON.stringify({ stdioAllowedEnv: ['LANG'], stdioCommands: ['node'], stdioAllowCwd: false }));
    const config = parseConfig({ servers: {}, plugins: [dir], stateDir: tempDir(), policy: './p.json' }, { baseDir: policyDir });
    const loaded = await loadPlugins(config);
    const verdicts = Object.fromEntries(loaded.plugins[0]!.servers.map((s) => [s.declaration.serverName, s.runs]));
    expect(verdicts).toEqual({ plain: true, secretenv: false, unlisted: false, ownbin: false, elsewhere: false });
    const fields = loaded.plugins[0]!.diagnostics.map((d) => `${d.server} ${d.field}`);
    expect(fields).toEqual(['secretenv env.NODE_OPTIONS', 'unlisted env.DATA_DIR', 'ownbin command', 'elsewhere cwd']);
    // Nothing of the values reaches the load message.
    expect(JSON.stringify(loaded.plugins[0]!.load)).not.toContain('/tmp/evil.js');
  });

  it('never lets a plugin HTTP server reach a loopback upstream, and keeps the gateway up', async () => {
    let requests = 0;
    const upstream: Server = createServer((_req, res) => {
      requests++;
      res.statusCode = 500;
      res.end();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    cleanup.add(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
    const dir = writePlugin('acme', { remote: { type: 'streamable-http', url }, where: whereamiEntry() });
    const { gateway } = await startPluginGateway(cleanup, { plugins: [dir] });
    const readyz = new URL('/readyz', gateway.url).href;
    const states = await waitUntil(async () => {
      const body = (await (await fetch(readyz)).json()) as { servers: Array<{ server: string; state: string }> };
      const state = Object.fromEntries(body.servers.map((s) => [s.server, s.state]));
      return state['acme.remote'] === 'error' && state;
    }, 'the plugin HTTP server to fail its connection');
    expect(states['acme.where']).toBe('ready');
    expect(requests).toBe(0);
    expect(await toolNames(gateway.url, '2025')).toEqual(['acme.where__whereami']);
  });

  it('refuses a ./ command that escapes the root through a symlink, and runs the plugin\'s other server', async () => {
    const dir = writePlugin(
      'acme',
      { escape: { type: 'stdio', command: './bin/server.mjs' }, where: whereamiEntry() },
      { 'bin/server.mjs': { symlink: WHEREAMI } },
    );
    const { gateway } = await startPluginGateway(cleanup, { plugins: [dir] });
    expect(await toolNames(gateway.url, '2025')).toEqual(['acme.where__whereami']);
    const { client } = await connectClient(cleanup, sideChannelUrl(gateway.url, 'acme.escape'), '2025').catch(() => ({ client: undefined }));
    expect(client).toBeUndefined();
  });

  it('runs a plugin sse server over the HTTP+SSE transport only where legacySse.upstream allows it', async () => {
    const dir = writePlugin('acme', { old: { type: 'sse', url: 'https://legacy.example.com/sse' } });
    const allowed = await loadPlugins(parseConfig({ servers: {}, plugins: [dir], stateDir: tempDir() }));
    expect(allowed.servers['acme.old']).toMatchObject({ transport: 'sse', allowPrivateNetwork: false, mode: 'optional' });
    const policyDir = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(policyDir, 'p.json'), JSON.stringify({ legacySse: { upstream: false } }));
    const refused = await loadPlugins(parseConfig({ servers: {}, plugins: [dir], stateDir: tempDir(), policy: './p.json' }, { baseDir: policyDir }));
    expect(refused.servers).toEqual({});
    expect(refused.plugins[0]!.diagnostics).toEqual([expect.objectContaining({ server: 'old', field: 'type' })]);
  });

  it('keeps a configured server whose name a plugin server also claims', async () => {
    const dir = writePlugin('acme', { where: whereamiEntry() });
    const config = parseConfig({ servers: { 'acme.where': { command: 'node', args: [WHEREAMI] } }, plugins: [dir], stateDir: tempDir() });
    const loaded = await loadPlugins(config);
    expect(loaded.servers).toEqual({});
    expect(loaded.plugins[0]!.load.kind).toBe('degraded');
    expect(loaded.plugins[0]!.diagnostics[0]).toMatchObject({ server: 'where', field: 'name' });
  });

  it('starts none of the servers of a plugin configured enabled: false', async () => {
    const dir = writePlugin('acme', { where: whereamiEntry() });
    const { gateway } = await startPluginGateway(cleanup, { plugins: [{ path: dir, enabled: false }] });
    expect(await toolNames(gateway.url, '2025')).toEqual([]);
    // Its side channel answers, and shows nothing: the server is stopped until enabled globally.
    expect(await toolNames(sideChannelUrl(gateway.url, 'acme.where'), '2025')).toEqual([]);
  });
});

describe('a plugin name claimed by two directories', () => {
  it('loads no claimant: neither serves a tool on either era, both are errors naming the other, and no data directory is made', async () => {
    const parent = tempDir('portcullis-plugins-');
    // `0-helper/` sorts first: by directory order it used to win the name and the genuine plugin's data.
    const impostor = agentPlugin(path.join(parent, '0-helper'), 'dice-kit', { dice: whereamiEntry({ cwd: '${PLUGIN_DATA}' }) });
    const genuine = agentPlugin(path.join(parent, 'dice-kit'), 'dice-kit', { dice: whereamiEntry({ cwd: '${PLUGIN_DATA}' }) });
    agentPlugin(path.join(parent, 'other'), 'other', { where: whereamiEntry() });
    const { gateway, stateDir } = await startPluginGateway(cleanup, { pluginDirs: [parent] });
    for (const era of ERAS) expect(await toolNames(gateway.url, era)).toEqual(['other.where__whereami']);
    const list = (await fetch(`${gateway.url}/customizations`)).json() as Promise<{ items: Array<{ name: string; uri: string; load?: { kind: string; message?: string } }> }>;
    const claimants = (await list).items.filter((item) => item.name === 'dice-kit');
    expect(claimants).toHaveLength(2);
    const manifestOf = (dir: string) => `${pathToFileURL(realpathSync(dir)).href}/plugin.json`;
    for (const [self, other] of [[impostor, genuine], [genuine, impostor]] as const) {
      const entry = claimants.find((item) => item.uri === manifestOf(self));
      expect(entry?.load).toEqual({ kind: 'error', message: expect.stringContaining(`is also claimed by the plugin declared at ${manifestOf(other)}`) });
    }
    expect(existsSync(path.join(stateDir, 'plugin-data', 'dice-kit'))).toBe(false);
    // An uncontested plugin with a stdio server gets its own: the absence above is the refusal's doing.
    expect(existsSync(path.join(stateDir, 'plugin-data', 'other'))).toBe(true);
  });
});
