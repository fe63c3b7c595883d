import { existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readAgentsDir } from '../../src/plugins/agents-dir.js';
import { contestedNames, readPluginDirs, readPluginSet } from '../../src/plugins/read-plugin-dirs.js';
import { FIXTURES, fixture, tempDir, writeTree } from './plugin-test-helpers.js';

const stateDir = tempDir('portcullis-plugin-state-');

describe('pluginDirs: every sub-directory is a plugin', () => {
  it('reads the fixture plugins in directory-name order with the expected load states', async () => {
    const set = await readPluginDirs([FIXTURES], { stateDir });
    expect(set.problems).toEqual([]);
    expect(set.plugins.map((p) => [path.basename(p.root), p.name, p.load.kind])).toEqual([
      ['agent-plugins-valid', 'ap-tools', 'loaded'],
      ['broken-agent-fields', 'bad-agents', 'degraded'],
      ['broken-dotdot-command', 'dotdot', 'degraded'],
      ['broken-duplicate-agent', 'dup-agents', 'degraded'],
      ['broken-env-reserved', 'env-reserved', 'degraded'],
      ['broken-json', 'broken-json', 'error'],
      ['broken-mcp-json', 'bad-mcp', 'degraded'],
      ['broken-missing-name', 'broken-missing-name', 'error'],
      ['broken-no-manifest', 'broken-no-manifest', 'error'],
      ['broken-symlink-escape', 'symlinked', 'degraded'],
      ['broken-unknown-type', 'unknown-type', 'degraded'],
      ['broken-url-userinfo', 'userinfo', 'degraded'],
      ['claude-code-valid', 'cc-suite', 'loaded'],
      ['open-plugins-path', 'op-linked', 'loaded'],
      ['open-plugins-valid', 'op-kit', 'loaded'],
    ]);
  });

  it('gives the same answer on every read', async () => {
    const first = await readPluginDirs([FIXTURES], { stateDir });
    const second = await readPluginDirs([FIXTURES], { stateDir });
    expect(second).toEqual(first);
  });

  it('skips hidden entries and files, follows symlinks to plugin directories', async () => {
    const top = realpathSync(tempDir());
    const dir = path.join(top, 'plugins');
    writeTree(dir, { '.hidden/.plugin/plugin.json': JSON.stringify({ name: 'hidden' }), 'README.md': '# plugins' });
    symlinkSync(fixture('open-plugins-path'), path.join(dir, 'linked'));
    const set = await readPluginDirs([dir], { stateDir });
    expect(set.plugins.map((p) => p.name)).toEqual(['op-linked']);
  });

  it('reports a plugin directory it cannot list, without values, and reads the others', async () => {
    const missing = path.join(tempDir(), 'absent');
    const set = await readPluginSet({ plugins: [fixture('open-plugins-path')], pluginDirs: [missing] }, { stateDir });
    expect(set.plugins.map((p) => p.name)).toEqual(['op-linked']);
    expect(set.problems).toEqual([`plugin directory ${pathToFileURL(missing).href} cannot be listed (ENOENT)`]);
  });
});

describe('a plugin set has one plugin per name and per directory', () => {
  it('turns every plugin claiming a contested name into an error naming the others, and reads none of them on', async () => {
    const top = realpathSync(tempDir());
    const stdio = { command: 'node', args: ['x.mjs'], cwd: '${PLUGIN_DATA}' };
    writeTree(path.join(top, 'a'), { '.plugin/plugin.json': JSON.stringify({ name: 'same', mcpServers: { s: { url: 'https://a.example/mcp' } } }) });
    writeTree(path.join(top, 'b'), { '.plugin/plugin.json': JSON.stringify({ name: 'same', mcpServers: { s: stdio } }), 'agents/x.md': '---\nname: x\n---\nX.\n' });
    writeTree(path.join(top, 'c'), { '.plugin/plugin.json': JSON.stringify({ name: 'same', mcpServers: { s: stdio } }) });
    const ownState = tempDir();
    const set = await readPluginDirs([top], { stateDir: ownState });
    expect(set.plugins).toHaveLength(3);
    const uris = set.plugins.map((p) => p.uri);
    set.plugins.forEach((plugin, i) => {
      expect(plugin).toMatchObject({ name: 'same', root: path.join(top, 'abc'[i]!), servers: [], agents: [] });
      const others = uris.filter((_, j) => j !== i).join(', ');
      expect(plugin.load).toEqual({
        kind: 'error',
        message: `plugin "same", field name: is also claimed by the plugin declared at ${others}; a name claimed twice loads no claimant (rename or remove one)`,
      });
    });
    expect(existsSync(path.join(ownState, 'plugin-data', 'same'))).toBe(false);
  });

  it('lets no broken directory named after a plugin contest its name', async () => {
    const top = realpathSync(tempDir());
    writeTree(path.join(top, 'kit'), { 'README.md': 'no manifest here' });
    writeTree(path.join(top, 'real'), { '.plugin/plugin.json': JSON.stringify({ name: 'kit', mcpServers: { s: { url: 'https://a.example/mcp' } } }) });
    const set = await readPluginDirs([top], { stateDir });
    expect(set.plugins.map((p) => [p.name, p.load.kind])).toEqual([['kit', 'error'], ['kit', 'loaded']]);
  });

  it.each([
    ['no claims', [], []],
    ['one claim each', [['a', 'u1', true], ['b', 'u2', true]], []],
    ['two claims of one name', [['a', 'u1', true], ['b', 'u2', true], ['a', 'u3', true]], [['a', ['u1', 'u3']]]],
    ['an unusable claim does not count', [['a', 'u1', true], ['a', 'u2', false]], []],
  ] as Array<[string, Array<[string, string, boolean]>, Array<[string, string[]]>]>)('finds contested names: %s', (_what, claims, contested) => {
    expect([...contestedNames(claims.map(([name, uri, usable]) => ({ name, uri, usable })))]).toEqual(contested);
  });

  it('reads a directory reached twice (listed and inside a plugin directory) once', async () => {
    const set = await readPluginSet({ plugins: [fixture('open-plugins-valid')], pluginDirs: [FIXTURES] }, { stateDir });
    expect(set.plugins.filter((p) => p.name === 'op-kit')).toHaveLength(1);
    expect(set.plugins[0]?.name).toBe('op-kit');
  });
});

describe('the gateway agents directory', () => {
  it('names agents without a plugin prefix', async () => {
    const dir = realpathSync(tempDir());
    writeTree(dir, {
      'planner.md': '---\nname: planner\ndescription: Plans work\ntools: a__b\n---\nPlan first.\n',
      'broken.md': '---\nname: Broken Name\n---\nx\n',
      'nested/ignored.md': '---\nname: ignored\n---\nx\n',
    });
    const read = await readAgentsDir(dir);
    expect(read.agents).toEqual([
      {
        key: 'agents#agent=planner',
        name: 'planner',
        agentName: 'planner',
        uri: pathToFileURL(path.join(dir, 'planner.md')).href,
        description: 'Plans work',
        tools: ['a__b'],
        body: 'Plan first.',
      },
    ]);
    expect(read.diagnostics).toEqual([
      { file: pathToFileURL(path.join(dir, 'broken.md')).href, agent: 'Broken Name', field: 'frontmatter.name', message: expect.stringContaining('kebab-case') },
    ]);
  });

  it('reports a directory that does not exist', async () => {
    const missing = path.join(tempDir(), 'none');
    mkdirSync(path.dirname(missing), { recursive: true });
    expect(await readAgentsDir(missing)).toEqual({ agents: [], diagnostics: [{ file: pathToFileURL(`${missing}/`).href, message: 'the agents directory does not exist' }] });
  });
});
