/**
 * The three layouts read from the checked-in fixtures: what each declaration holds, and where
 * each server entry was declared (ranges checked against the manifest text itself).
 */
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readPlugin } from '../../src/plugins/read-plugin.js';
import type { PluginDeclaration, PluginServerDeclaration } from '../../src/plugins/types.js';
import { fixture, sliceByRange, tempDir } from './plugin-test-helpers.js';

const stateDir = tempDir('portcullis-plugin-state-');
const dataOf = (plugin: string) => path.join(realpathSync(stateDir), 'plugin-data', plugin);

/** Each server's range, applied to the text of the file its `uri` names, is exactly that entry. */
function expectRangesMatchText(plugin: PluginDeclaration, at: (value: unknown) => Record<string, unknown>) {
  expect(plugin.servers.length).toBeGreaterThan(0);
  for (const server of plugin.servers) {
    const text = readFileSync(fileURLToPath(server.uri), 'utf8');
    const slice = sliceByRange(text, server.range);
    expect(slice.startsWith(JSON.stringify(server.serverName))).toBe(true);
    expect(slice.endsWith('}')).toBe(true);
    const reparsed = JSON.parse(`{${slice}}`) as Record<string, unknown>;
    expect(reparsed[server.serverName]).toEqual(at(JSON.parse(text))[server.serverName]);
  }
}

const mcpServersOf = (value: unknown) => (value as { mcpServers: Record<string, unknown> }).mcpServers;

function server(plugin: PluginDeclaration, name: string): PluginServerDeclaration {
  const found = plugin.servers.find((s) => s.serverName === name);
  if (found === undefined) throw new Error(`no server ${name}`);
  return found;
}

describe('Agent Plugins 1.0 (plugin.json + mcp.json)', () => {
  it('reads the manifest, each transport and the agent', async () => {
    const plugin = await readPlugin(fixture('agent-plugins-valid'), { stateDir });
    const root = realpathSync(fixture('agent-plugins-valid'));
    expect(plugin).toMatchObject({
      key: 'plugin:ap-tools',
      name: 'ap-tools',
      layout: 'agent-plugins',
      version: '1.2.0',
      description: 'An Agent Plugins 1.0 plugin with one server of each transport and one agent',
      root,
      uri: pathToFileURL(path.join(root, 'plugin.json')).href,
      load: { kind: 'loaded' },
      diagnostics: [],
    });
    expect(plugin.servers.map((s) => [s.name, s.key, s.supported])).toEqual([
      ['ap-tools.files', 'plugin:ap-tools#mcp=files', true],
      ['ap-tools.remote', 'plugin:ap-tools#mcp=remote', true],
      ['ap-tools.legacy', 'plugin:ap-tools#mcp=legacy', true],
    ]);
    expect(server(plugin, 'files')).toMatchObject({
      uri: pathToFileURL(path.join(root, 'mcp.json')).href,
      config: {
        transport: 'stdio',
        command: path.join(root, 'bin', 'server.mjs'),
        args: ['--root', `${root}/config`, `--data=${dataOf('ap-tools')}`, '--greeting=héllo 🚀', '${HOME}'],
        env: { DATA_DIR: `${dataOf('ap-tools')}/files`, PLUGIN_ROOT: root, PLUGIN_DATA: dataOf('ap-tools') },
        cwd: path.join(root, 'bin'),
        mode: 'optional',
      },
    });
    expect(server(plugin, 'remote')).toMatchObject({
      config: { transport: 'streamableHttp', url: 'https://mcp.example.com/mcp', headers: { 'X-Tenant': 'public-tenant' }, allowPrivateNetwork: false, mode: 'optional', envHeaders: {} },
    });
    expect(server(plugin, 'legacy')).toMatchObject({
      supported: true,
      config: { transport: 'sse', url: 'https://legacy.example.com/sse', allowPrivateNetwork: false, mode: 'optional', envHeaders: {} },
    });
    expect(plugin.agents).toEqual([
      {
        key: 'plugin:ap-tools#agent=reviewer',
        name: 'ap-tools:reviewer',
        agentName: 'reviewer',
        uri: pathToFileURL(path.join(root, 'agents', 'reviewer.md')).href,
        description: 'Reviews a change for correctness and style',
        model: 'claude-sonnet-4',
        tools: ['files__read_file', 'mcp__files__list_directory'],
        body: 'You review code changes. Point out bugs first, style second.',
      },
    ]);
  });

  it('gives every entry the span of its declaration in mcp.json, non-ASCII lines included', async () => {
    const plugin = await readPlugin(fixture('agent-plugins-valid'), { stateDir });
    expectRangesMatchText(plugin, mcpServersOf);
    expect(server(plugin, 'files').range.start).toEqual({ line: 3, character: 4 });
  });

  it('is frozen, so no consumer can change what another one sees', async () => {
    const plugin = await readPlugin(fixture('agent-plugins-valid'), { stateDir });
    expect(Object.isFrozen(plugin)).toBe(true);
    expect(Object.isFrozen(plugin.servers[0]?.range.start)).toBe(true);
  });
});

describe('Open Plugins (.plugin/plugin.json)', () => {
  it('reads inline servers with ranges into the manifest itself (a CRLF file)', async () => {
    const plugin = await readPlugin(fixture('open-plugins-valid'), { stateDir });
    const root = realpathSync(fixture('open-plugins-valid'));
    const manifestUri = pathToFileURL(path.join(root, '.plugin', 'plugin.json')).href;
    expect(plugin).toMatchObject({ name: 'op-kit', layout: 'open-plugins', version: '0.3.0', uri: manifestUri, load: { kind: 'loaded' } });
    expect(readFileSync(path.join(root, '.plugin', 'plugin.json'), 'utf8')).toContain('\r\n');
    expect(plugin.servers.map((s) => [s.name, s.uri])).toEqual([
      ['op-kit.echo', manifestUri],
      ['op-kit.docs', manifestUri],
    ]);
    expectRangesMatchText(plugin, mcpServersOf);
    expect(server(plugin, 'echo')).toMatchObject({
      config: { transport: 'stdio', command: path.join(root, 'bin', 'server.mjs'), args: [root], cwd: path.join(root, 'bin') },
    });
    expect(server(plugin, 'docs')).toMatchObject({ config: { transport: 'streamableHttp', url: 'http://127.0.0.1:9/mcp', allowPrivateNetwork: false } });
    expect(plugin.agents.map((a) => [a.name, a.disableModelInvocation])).toEqual([['op-kit:helper', true]]);
  });

  it('inlines a ./ logo as a data: image icon', async () => {
    const plugin = await readPlugin(fixture('open-plugins-valid'), { stateDir });
    const png = readFileSync(path.join(fixture('open-plugins-valid'), 'assets', 'logo.png'));
    expect(plugin.icons).toEqual([{ src: `data:image/png;base64,${png.toString('base64')}`, contentType: 'image/png' }]);
  });

  it('follows a ./ path to a servers file, with ranges into that file', async () => {
    const plugin = await readPlugin(fixture('open-plugins-path'), { stateDir });
    const root = realpathSync(fixture('open-plugins-path'));
    expect(plugin.load).toEqual({ kind: 'loaded' });
    expect(plugin.servers.map((s) => [s.name, s.uri])).toEqual([['op-linked.search', pathToFileURL(path.join(root, 'config', 'servers.json')).href]]);
    expectRangesMatchText(plugin, mcpServersOf);
  });
});

describe('Claude Code (.claude-plugin/plugin.json + .mcp.json)', () => {
  it('reads Claude Desktop-shaped servers and expands the CLAUDE_ placeholders once', async () => {
    const plugin = await readPlugin(fixture('claude-code-valid'), { stateDir });
    const root = realpathSync(fixture('claude-code-valid'));
    expect(plugin).toMatchObject({ name: 'cc-suite', layout: 'claude-code', version: '2.0.0', load: { kind: 'loaded' } });
    expectRangesMatchText(plugin, mcpServersOf);
    expect(server(plugin, 'db')).toMatchObject({
      uri: pathToFileURL(path.join(root, '.mcp.json')).href,
      config: {
        transport: 'stdio',
        command: 'node',
        args: [path.join(root, 'servers', 'db.mjs'), '--cache', `${dataOf('cc-suite')}/cache`],
        // Claude Code would read ${API_TOKEN} from the host environment; here it stays literal.
        env: {
          DB_TOKEN_HINT: '${API_TOKEN}',
          PLUGIN_ROOT: root,
          PLUGIN_DATA: dataOf('cc-suite'),
          CLAUDE_PLUGIN_ROOT: root,
          CLAUDE_PLUGIN_DATA: dataOf('cc-suite'),
        },
        cwd: root,
      },
    });
    expect(server(plugin, 'api')).toMatchObject({ config: { transport: 'streamableHttp', url: 'https://api.example.com/mcp', headers: { 'X-Client': 'portcullis' } } });
  });

  it('reads several agents in file-name order, ignoring files that are not .md', async () => {
    const plugin = await readPlugin(fixture('claude-code-valid'), { stateDir });
    expect(plugin.agents.map((a) => a.name)).toEqual(['cc-suite:alpha', 'cc-suite:beta', 'cc-suite:delta', 'cc-suite:gamma']);
    const [alpha, beta, delta, gamma] = plugin.agents;
    expect(alpha).toMatchObject({ tools: ['Read', 'Grep', 'Glob'], body: '# Alpha\n\nYou are alpha.' });
    expect(beta).toMatchObject({
      description: 'Second agent, folded over two lines\n',
      model: 'opus',
      tools: ['db__query', 'api__*'],
      disableUserInvocation: true,
      disableModelInvocation: false,
      body: 'You are beta.',
    });
    expect(delta).toMatchObject({ description: 'CRLF line endings', body: 'You are delta.' });
    expect(gamma).toEqual({
      key: 'plugin:cc-suite#agent=gamma',
      name: 'cc-suite:gamma',
      agentName: 'gamma',
      uri: pathToFileURL(path.join(realpathSync(fixture('claude-code-valid')), 'agents', 'gamma.md')).href,
      body: '',
    });
  });
});
