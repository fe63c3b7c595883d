/**
 * The formats' rules on plugins built on the fly: package-path containment (symlinks included),
 * cwd forms, one-pass expansion, the per-plugin data directory, manifest rules and bounds.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPlugin } from '../../src/plugins/read-plugin.js';
import type { PluginDeclaration } from '../../src/plugins/types.js';
import { AP_MCP_SCHEMA, AP_PLUGIN_SCHEMA, agentPlugin, tempDir, writeTree } from './plugin-test-helpers.js';

const SERVER = { executable: '#!/bin/sh\nexit 0\n' };

function newPlugin(): { top: string; root: string; stateDir: string } {
  const top = realpathSync(tempDir());
  return { top, root: path.join(top, 'plugin'), stateDir: path.join(top, 'state') };
}

const fields = (plugin: PluginDeclaration) => plugin.diagnostics.map((d) => [d.server ?? d.agent, d.field]);
const names = (plugin: PluginDeclaration) => plugin.servers.map((s) => s.serverName);
function stdioConfig(plugin: PluginDeclaration, name: string) {
  const found = plugin.servers.find((s) => s.serverName === name);
  if (found === undefined || !found.supported || found.config.transport !== 'stdio') throw new Error(`no stdio server ${name}`);
  return found.config;
}

describe('cwd', () => {
  it('accepts ./, ${PLUGIN_ROOT} and ${PLUGIN_DATA} forms; defaults to the plugin root', async () => {
    const { root, stateDir } = newPlugin();
    agentPlugin(root, 'cwds', {
      none: { type: 'stdio', command: 'node' },
      dot: { type: 'stdio', command: 'node', cwd: './work' },
      rootExact: { type: 'stdio', command: 'node', cwd: '${PLUGIN_ROOT}' },
      rootSub: { type: 'stdio', command: 'node', cwd: '${PLUGIN_ROOT}/work' },
      dataExact: { type: 'stdio', command: 'node', cwd: '${PLUGIN_DATA}' },
      dataSub: { type: 'stdio', command: 'node', cwd: '${PLUGIN_DATA}/cache/deep' },
    }, { 'work/.keep': '' });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.diagnostics).toEqual([]);
    const data = path.join(stateDir, 'plugin-data', 'cwds');
    expect(Object.fromEntries(plugin.servers.map((s) => [s.serverName, s.supported && s.config.transport === 'stdio' ? s.config.cwd : undefined]))).toEqual({
      none: root,
      dot: path.join(root, 'work'),
      rootExact: root,
      rootSub: path.join(root, 'work'),
      dataExact: data,
      dataSub: path.join(data, 'cache', 'deep'),
    });
    // A working directory inside PLUGIN_DATA is the plugin's own state: created, private.
    expect(statSync(path.join(data, 'cache', 'deep')).isDirectory()).toBe(true);
  });

  it.each([
    ['a bare relative path', 'work'],
    ['an absolute path', '/tmp'],
    ['a placeholder glued to a name', '${PLUGIN_ROOT}work'],
    ['another variable', '${HOME}'],
    ['a ../ escape from the root', './../'],
    ['a ../ escape through ${PLUGIN_ROOT}', '${PLUGIN_ROOT}/..'],
    ['a ../ escape from the data directory', '${PLUGIN_DATA}/../../..'],
    ['a symlinked directory leading out', './linked'],
    ['a directory the plugin does not contain', './missing'],
    ['a file', './work/file'],
  ])('refuses %s', async (_label, cwd) => {
    const { top, root, stateDir } = newPlugin();
    mkdirSync(path.join(top, 'elsewhere'));
    agentPlugin(root, 'cwd-bad', { s: { type: 'stdio', command: 'node', cwd } }, { 'work/file': '', linked: { symlink: path.join(top, 'elsewhere') } });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.servers).toEqual([]);
    expect(fields(plugin)).toEqual([['s', 'cwd']]);
  });
});

describe('commands', () => {
  it('runs a ./ command by its resolved path, a symlink inside the root included', async () => {
    const { root, stateDir } = newPlugin();
    agentPlugin(root, 'cmds', {
      direct: { type: 'stdio', command: './bin/server' },
      linked: { type: 'stdio', command: './bin/alias' },
      bare: { type: 'stdio', command: 'node' },
    }, { 'bin/server': SERVER, 'bin/alias': { symlink: 'server' } });
    const plugin = await readPlugin(root, { stateDir });
    expect(stdioConfig(plugin, 'direct').command).toBe(path.join(root, 'bin', 'server'));
    expect(stdioConfig(plugin, 'linked').command).toBe(path.join(root, 'bin', 'server'));
    expect(stdioConfig(plugin, 'bare').command).toBe('node');
  });

  it('refuses a command that is missing, a directory, absolute, or a symlink to an absolute path outside', async () => {
    const { top, root, stateDir } = newPlugin();
    writeFileSync(path.join(top, 'outside'), '#!/bin/sh\n');
    agentPlugin(root, 'cmds-bad', {
      missing: { type: 'stdio', command: './bin/none' },
      directory: { type: 'stdio', command: './bin' },
      absolute: { type: 'stdio', command: path.join(top, 'outside') },
      escape: { type: 'stdio', command: './bin/out' },
      expanded: { type: 'stdio', command: '${PLUGIN_ROOT}/bin/server' },
    }, { 'bin/server': SERVER, 'bin/out': { symlink: path.join(top, 'outside') } });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.servers).toEqual([]);
    expect(fields(plugin)).toEqual([
      ['missing', 'command'],
      ['directory', 'command'],
      ['absolute', 'command'],
      ['escape', 'command'],
      ['expanded', 'command'],
    ]);
  });
});

describe('expansion happens once, in args, env values and cwd only', () => {
  it('keeps a placeholder that a replacement brought in literal (a root directory named with one)', async () => {
    const top = realpathSync(tempDir());
    const root = path.join(top, 'weird-${PLUGIN_DATA}-root');
    const stateDir = path.join(top, 'state-${PLUGIN_ROOT}');
    agentPlugin(root, 'once', {
      s: {
        type: 'stdio',
        command: 'node',
        args: ['${PLUGIN_ROOT}', '${PLUGIN_DATA}'],
        env: { BOTH: '${PLUGIN_ROOT}:${PLUGIN_DATA}' },
        cwd: '${PLUGIN_ROOT}',
      },
      r: { type: 'streamable-http', url: 'https://h.example/${PLUGIN_ROOT}', headers: { 'X-Root': '${PLUGIN_ROOT}' } },
    });
    const plugin = await readPlugin(root, { stateDir });
    const data = path.join(stateDir, 'plugin-data', 'once');
    const config = stdioConfig(plugin, 's');
    expect(config.args).toEqual([root, data]);
    expect(config.env.BOTH).toBe(`${root}:${data}`);
    expect(config.cwd).toBe(root);
    expect(config.args[0]).toContain('${PLUGIN_DATA}');
    expect(config.args[1]).toContain('${PLUGIN_ROOT}');
    const remote = plugin.servers.find((s) => s.serverName === 'r');
    expect(remote).toMatchObject({ config: { url: 'https://h.example/${PLUGIN_ROOT}', headers: { 'X-Root': '${PLUGIN_ROOT}' } } });
  });
});

describe('PLUGIN_DATA', () => {
  it('is a 0700 directory per plugin under the state directory, created only for stdio servers', async () => {
    const { top, stateDir } = newPlugin();
    agentPlugin(path.join(top, 'local'), 'local', { s: { type: 'stdio', command: 'node' } });
    agentPlugin(path.join(top, 'remote'), 'remote-only', { r: { type: 'streamable-http', url: 'https://h.example/mcp' } });
    await readPlugin(path.join(top, 'local'), { stateDir });
    await readPlugin(path.join(top, 'remote'), { stateDir });
    const info = statSync(path.join(stateDir, 'plugin-data', 'local'));
    expect(info.isDirectory()).toBe(true);
    expect(info.mode & 0o777).toBe(0o700);
    expect(() => statSync(path.join(stateDir, 'plugin-data', 'remote-only'))).toThrow();
  });

  it('skips stdio servers, naming the cause, when the data directory cannot be created', async () => {
    const { top, root } = newPlugin();
    writeFileSync(path.join(top, 'not-a-dir'), '');
    agentPlugin(root, 'no-data', { s: { type: 'stdio', command: 'node' }, r: { type: 'streamable-http', url: 'https://h.example/mcp' } });
    const plugin = await readPlugin(root, { stateDir: path.join(top, 'not-a-dir') });
    expect(names(plugin)).toEqual(['r']);
    expect(plugin.diagnostics).toMatchObject([{ server: 's', message: expect.stringContaining('plugin data directory cannot be created') }]);
  });
});

describe('files the plugin points at stay inside its root', () => {
  it('refuses a manifest that is a symlink leading out (load error)', async () => {
    const { top, root, stateDir } = newPlugin();
    writeFileSync(path.join(top, 'real.json'), JSON.stringify({ $schema: AP_PLUGIN_SCHEMA, name: 'x' }));
    writeTree(root, { 'plugin.json': { symlink: path.join(top, 'real.json') } });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.load).toEqual({ kind: 'error', message: 'plugin "plugin": manifest resolves outside the plugin root' });
  });

  it('disables MCP when mcp.json is a symlink leading out', async () => {
    const { top, root, stateDir } = newPlugin();
    writeFileSync(path.join(top, 'mcp.json'), JSON.stringify({ $schema: AP_MCP_SCHEMA, mcpServers: { s: { type: 'stdio', command: 'node' } } }));
    writeTree(root, { 'plugin.json': JSON.stringify({ $schema: AP_PLUGIN_SCHEMA, name: 'mcp-link' }), 'mcp.json': { symlink: path.join(top, 'mcp.json') } });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.servers).toEqual([]);
    expect(plugin.load).toMatchObject({ kind: 'degraded', message: expect.stringContaining('resolves outside the plugin root; its servers are disabled') });
  });

  it('refuses an Open Plugins mcpServers path that is not ./ or leads out', async () => {
    for (const [declared, extra] of [
      ['../servers.json', {}],
      ['./link.json', { 'link.json': { symlink: '../servers.json' } }],
      ['/etc/servers.json', {}],
    ] as const) {
      const { top, root, stateDir } = newPlugin();
      writeFileSync(path.join(top, 'servers.json'), JSON.stringify({ mcpServers: { s: { command: 'node' } } }));
      writeTree(root, { '.plugin/plugin.json': JSON.stringify({ name: 'op', mcpServers: declared }), ...extra });
      const plugin = await readPlugin(root, { stateDir });
      expect(plugin.servers).toEqual([]);
      expect(plugin.load.kind).toBe('degraded');
    }
  });

  it('ignores an agents directory, or an agent file, that leads out', async () => {
    const { top, root, stateDir } = newPlugin();
    mkdirSync(path.join(top, 'agents'));
    writeFileSync(path.join(top, 'agents', 'spy.md'), '---\nname: spy\n---\nOutside.\n');
    writeTree(root, { '.plugin/plugin.json': JSON.stringify({ name: 'agent-link' }), agents: { symlink: path.join(top, 'agents') } });
    const dirLinked = await readPlugin(root, { stateDir });
    expect(dirLinked.agents).toEqual([]);
    expect(dirLinked.load.kind).toBe('degraded');

    const other = newPlugin();
    writeFileSync(path.join(other.top, 'spy.md'), '---\nname: spy\n---\nOutside.\n');
    writeTree(other.root, {
      '.plugin/plugin.json': JSON.stringify({ name: 'file-link' }),
      'agents/ok.md': '---\nname: ok\n---\nInside.\n',
      'agents/spy.md': { symlink: path.join(other.top, 'spy.md') },
    });
    const fileLinked = await readPlugin(other.root, { stateDir: other.stateDir });
    expect(fileLinked.agents.map((a) => a.name)).toEqual(['file-link:ok']);
    expect(fileLinked.diagnostics).toMatchObject([{ agent: 'spy', message: expect.stringContaining('outside the plugin root') }]);
  });
});

describe('manifests', () => {
  it('reports and ignores unknown Agent Plugins manifest fields and a non-object extensions', async () => {
    const { root, stateDir } = newPlugin();
    writeTree(root, { 'plugin.json': JSON.stringify({ $schema: AP_PLUGIN_SCHEMA, name: 'extra', icons: [], extensions: 'x', mcpServers: {} }) });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.load.kind).toBe('degraded');
    expect(plugin.diagnostics.map((d) => d.field)).toEqual(['extensions', '"icons"', '"mcpServers"']);
    expect(plugin.icons).toBeUndefined();
  });

  it.each([
    ['an unsupported $schema', { $schema: 'https://agent-plugins.org/schemas/9.0.0/plugin.schema.json', name: 'x' }, '$schema'],
    ['no $schema', { name: 'x' }, '$schema'],
    ['an invalid name', { $schema: AP_PLUGIN_SCHEMA, name: 'Has Spaces' }, 'name'],
    ['a non-string version', { $schema: AP_PLUGIN_SCHEMA, name: 'x', version: 1 }, 'version'],
    ['an author with extra fields', { $schema: AP_PLUGIN_SCHEMA, name: 'x', author: { name: 'a', twitter: 'b' } }, 'author'],
    ['non-string keywords', { $schema: AP_PLUGIN_SCHEMA, name: 'x', keywords: [1] }, 'keywords'],
  ])('rejects an Agent Plugins manifest with %s', async (_label, manifest, field) => {
    const { root, stateDir } = newPlugin();
    writeTree(root, { 'plugin.json': JSON.stringify(manifest) });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.load.kind).toBe('error');
    expect(plugin.diagnostics[0]?.field).toBe(field);
  });

  it('prefers plugin.json when a package carries several manifests', async () => {
    const { root, stateDir } = newPlugin();
    writeTree(root, {
      'plugin.json': JSON.stringify({ $schema: AP_PLUGIN_SCHEMA, name: 'portable' }),
      '.plugin/plugin.json': JSON.stringify({ name: 'open' }),
      '.claude-plugin/plugin.json': JSON.stringify({ name: 'claude' }),
    });
    expect(await readPlugin(root, { stateDir })).toMatchObject({ name: 'portable', layout: 'agent-plugins' });
  });

  it('merges .mcp.json and inline servers, skipping a name declared twice', async () => {
    const { root, stateDir } = newPlugin();
    writeTree(root, {
      '.claude-plugin/plugin.json': JSON.stringify({ name: 'merged', mcpServers: { inline: { command: 'node' }, both: { url: 'https://b.example/mcp' } } }),
      '.mcp.json': JSON.stringify({ mcpServers: { file: { command: 'node' }, both: { command: 'node' } } }),
    });
    const plugin = await readPlugin(root, { stateDir });
    expect(names(plugin)).toEqual(['file', 'both', 'inline']);
    expect(plugin.servers.find((s) => s.serverName === 'both')?.uri.endsWith('/.mcp.json')).toBe(true);
    expect(plugin.diagnostics).toMatchObject([{ server: 'both', message: expect.stringContaining('more than once') }]);
  });

  it('reads a file named both by the fallback and by mcpServers once', async () => {
    const { root, stateDir } = newPlugin();
    writeTree(root, {
      '.plugin/plugin.json': JSON.stringify({ name: 'same-file', mcpServers: './.mcp.json' }),
      '.mcp.json': JSON.stringify({ mcpServers: { s: { command: 'node' } } }),
    });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin).toMatchObject({ load: { kind: 'loaded' } });
    expect(names(plugin)).toEqual(['s']);
  });

  it('skips a server declared twice in one file (JSON.parse would keep only the last)', async () => {
    const { root, stateDir } = newPlugin();
    writeTree(root, {
      'plugin.json': JSON.stringify({ $schema: AP_PLUGIN_SCHEMA, name: 'twice' }),
      'mcp.json': `{"$schema": "${AP_MCP_SCHEMA}", "mcpServers": {"a": {"type": "stdio", "command": "node"}, "a": {"type": "stdio", "command": "evil"}, "b": {"type": "stdio", "command": "node"}}}`,
    });
    const plugin = await readPlugin(root, { stateDir });
    expect(names(plugin)).toEqual(['b']);
    expect(plugin.diagnostics).toMatchObject([{ server: 'a' }]);
  });

  it('refuses server names that would make <plugin>.<server> ambiguous', async () => {
    const { root, stateDir } = newPlugin();
    agentPlugin(root, 'names', { 'a.b': { type: 'stdio', command: 'node' }, ok: { type: 'stdio', command: 'node' } });
    const plugin = await readPlugin(root, { stateDir });
    expect(names(plugin)).toEqual(['ok']);
    expect(plugin.diagnostics[0]?.field).toBe('mcpServers."a.b"');
  });

  it('reports icons it cannot use and keeps the plugin', async () => {
    const { root, stateDir } = newPlugin();
    writeTree(root, {
      '.plugin/plugin.json': JSON.stringify({
        name: 'icons',
        icons: [{ src: 'https://cdn.example/i.png', mimeType: 'image/png', sizes: ['48x48'], theme: 'dark' }, { src: 'http://cdn.example/i.png' }, { src: './notes.txt' }, { src: 'https://u:p@cdn.example/i.png' }],
        logo: '../outside.png',
      }),
      'notes.txt': 'x',
    });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.icons).toEqual([{ src: 'https://cdn.example/i.png', contentType: 'image/png', sizes: ['48x48'], theme: 'dark' }]);
    expect(plugin.diagnostics.map((d) => d.field)).toEqual(['icons[1].src', 'icons[2].src', 'icons[3].src', 'logo.src']);
    expect(JSON.stringify(plugin.diagnostics)).not.toContain('u:p');
  });
});

describe('bounds', () => {
  it('refuses a manifest over 1 MiB', async () => {
    const { root, stateDir } = newPlugin();
    writeTree(root, { 'plugin.json': JSON.stringify({ $schema: AP_PLUGIN_SCHEMA, name: 'big', description: 'x'.repeat(1024 * 1024) }) });
    expect((await readPlugin(root, { stateDir })).load).toMatchObject({ kind: 'error', message: expect.stringContaining('larger than') });
  });

  it('refuses a FIFO planted as the manifest instead of waiting on it', async () => {
    const { root, stateDir } = newPlugin();
    mkdirSync(root, { recursive: true });
    execFileSync('mkfifo', [path.join(root, 'plugin.json')]);
    expect((await readPlugin(root, { stateDir })).load).toEqual({ kind: 'error', message: 'plugin "plugin": manifest is not a regular file' });
  });

  it('reads at most 64 servers per plugin and says so', async () => {
    const { root, stateDir } = newPlugin();
    const servers = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`s${i}`, { type: 'streamable-http', url: 'https://h.example/mcp' }]));
    agentPlugin(root, 'many', servers);
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.servers).toHaveLength(64);
    expect(plugin.diagnostics).toMatchObject([{ field: 'mcpServers', message: expect.stringContaining('more than 64') }]);
  });

  it('bounds the reports of a file full of bad entries or unknown fields', async () => {
    const { root, stateDir } = newPlugin();
    const servers = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`bad.${i}`, {}]));
    const manifest = Object.fromEntries([['$schema', AP_PLUGIN_SCHEMA], ['name', 'noisy'], ...Array.from({ length: 100 }, (_, i) => [`extra${i}`, i])]);
    writeTree(root, { 'plugin.json': JSON.stringify(manifest), 'mcp.json': JSON.stringify({ $schema: AP_MCP_SCHEMA, mcpServers: servers }) });
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.diagnostics).toHaveLength(17 + 65);
    expect(plugin.diagnostics[16]).toMatchObject({ field: '$', message: expect.stringContaining('84 more fields') });
    expect(plugin.diagnostics.at(-1)).toMatchObject({ field: 'mcpServers', message: expect.stringContaining('more than 64') });
  });

  it('reads at most 128 agent files and skips one over 256 KiB', async () => {
    const { root, stateDir } = newPlugin();
    const files: Record<string, string> = { '.plugin/plugin.json': JSON.stringify({ name: 'crowd' }) };
    for (let i = 0; i < 130; i++) files[`agents/a${String(i).padStart(3, '0')}.md`] = `---\nname: a${i}\n---\nBody.\n`;
    files['agents/a000.md'] = `---\nname: huge\n---\n${'x'.repeat(256 * 1024)}\n`;
    writeTree(root, files);
    const plugin = await readPlugin(root, { stateDir });
    expect(plugin.agents).toHaveLength(127);
    expect(plugin.diagnostics.map((d) => d.message)).toEqual([
      expect.stringContaining('more than 128 agent files'),
      expect.stringContaining('larger than 262144 bytes'),
    ]);
  });
});
