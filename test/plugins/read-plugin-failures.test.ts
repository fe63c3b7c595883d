/**
 * Failure boundaries: what a broken manifest, configuration file, server entry or agent file
 * takes down (and what it leaves running), and that no diagnostic carries a configured value.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeDiagnostic } from '../../src/plugins/diagnostics.js';
import { readPlugin } from '../../src/plugins/read-plugin.js';
import type { PluginDeclaration } from '../../src/plugins/types.js';
import { fixture, tempDir } from './plugin-test-helpers.js';

const stateDir = tempDir('portcullis-plugin-state-');
const read = (name: string) => readPlugin(fixture(name), { stateDir });
const serverNames = (plugin: PluginDeclaration) => plugin.servers.map((s) => s.serverName);
const messages = (plugin: PluginDeclaration) => plugin.diagnostics.map(describeDiagnostic);

describe('a bad manifest disables the whole plugin (load error)', () => {
  it('refuses a manifest that is not valid JSON', async () => {
    const plugin = await read('broken-json');
    expect(plugin).toMatchObject({ name: 'broken-json', load: { kind: 'error', message: 'plugin "broken-json": manifest is not valid JSON' }, servers: [], agents: [] });
    expect(plugin.uri).toBe(pathToFileURL(path.join(realpathSync(fixture('broken-json')), 'plugin.json')).href);
  });

  it('refuses a manifest without a name, naming the field', async () => {
    const plugin = await read('broken-missing-name');
    expect(plugin.load).toEqual({ kind: 'error', message: 'plugin "broken-missing-name", field name: is required' });
    expect(plugin.layout).toBeUndefined();
  });

  it('refuses a directory with no manifest of any layout', async () => {
    const plugin = await read('broken-no-manifest');
    expect(plugin.load.kind).toBe('error');
    expect(plugin.load).toMatchObject({ message: expect.stringContaining('no plugin manifest') });
    expect(plugin.uri.endsWith('/broken-no-manifest/')).toBe(true);
  });

  it('refuses a directory that does not exist', async () => {
    const plugin = await readPlugin(path.join(tempDir(), 'nope'), { stateDir });
    expect(plugin).toMatchObject({ name: 'nope', load: { kind: 'error' }, servers: [], agents: [] });
  });
});

describe('a bad MCP configuration file disables MCP for that plugin only', () => {
  it('keeps the agents of a plugin whose mcp.json has no $schema', async () => {
    const plugin = await read('broken-mcp-json');
    expect(plugin.servers).toEqual([]);
    expect(plugin.agents.map((a) => a.name)).toEqual(['bad-mcp:survivor']);
    expect(plugin.load).toEqual({ kind: 'degraded', message: 'plugin "bad-mcp", field $schema: is required; its servers are disabled' });
  });
});

describe('a bad server entry skips that entry only (load degraded)', () => {
  it('refuses ../ and escaping commands and a command with arguments, keeping the valid sibling', async () => {
    const plugin = await read('broken-dotdot-command');
    expect(serverNames(plugin)).toEqual(['good']);
    expect(plugin.load.kind).toBe('degraded');
    expect(plugin.diagnostics.map((d) => [d.plugin, d.server, d.field])).toEqual([
      ['dotdot', 'parent', 'command'],
      ['dotdot', 'sneaky', 'command'],
      ['dotdot', 'spaced', 'command'],
    ]);
    expect(messages(plugin)[1]).toBe('plugin "dotdot", server "sneaky", field command: resolves outside the plugin root; server skipped');
  });

  it('refuses a command whose symlink leads outside the plugin root', async () => {
    const plugin = await read('broken-symlink-escape');
    expect(plugin.servers).toEqual([]);
    expect(plugin.load).toEqual({
      kind: 'degraded',
      message: 'plugin "symlinked", server "escape", field command: resolves outside the plugin root; server skipped',
    });
  });

  it('refuses an env that names PLUGIN_ROOT', async () => {
    const plugin = await read('broken-env-reserved');
    expect(serverNames(plugin)).toEqual(['plain']);
    expect(plugin.diagnostics).toMatchObject([{ plugin: 'env-reserved', server: 'rooted', field: 'env.PLUGIN_ROOT' }]);
  });

  it('refuses an unknown type and a field of another variant', async () => {
    const plugin = await read('broken-unknown-type');
    expect(serverNames(plugin)).toEqual(['ok']);
    expect(plugin.diagnostics.map((d) => [d.server, d.field])).toEqual([
      ['socket', 'type'],
      ['mixed', '"command"'],
    ]);
  });

  it('refuses userinfo, fragments and plain http off loopback; accepts http to localhost', async () => {
    const plugin = await read('broken-url-userinfo');
    expect(serverNames(plugin)).toEqual(['local']);
    expect(plugin.diagnostics.map((d) => [d.server, d.field])).toEqual([
      ['creds', 'url'],
      ['fragment', 'url'],
      ['plainhttp', 'url'],
    ]);
  });

  it('never echoes a command, URL, header or env value in a diagnostic or load message', async () => {
    const secrets = ['hunter2-secret', 'alice', 'frag-secret', 'plain-secret', 'secret-env-value-1234', '"/etc"', 'npx -y', '../bin/server', 'outside/server'];
    for (const name of ['broken-url-userinfo', 'broken-env-reserved', 'broken-dotdot-command', 'broken-unknown-type']) {
      const plugin = await read(name);
      const text = JSON.stringify({ load: plugin.load, diagnostics: plugin.diagnostics });
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });
});

describe('bad agent files are reported (agent, file, field) and skipped', () => {
  it('reports each invalid kind and keeps the valid agent', async () => {
    const plugin = await read('broken-agent-fields');
    const root = realpathSync(fixture('broken-agent-fields'));
    expect(plugin.agents.map((a) => a.name)).toEqual(['bad-agents:fine']);
    expect(plugin.load.kind).toBe('degraded');
    const seen = plugin.diagnostics.map((d) => [path.basename(new URL(d.file).pathname), d.agent, d.field]);
    expect(seen).toEqual([
      ['bad-flag.md', 'bad-flag', 'frontmatter.disable-model-invocation'],
      ['bad-model.md', 'bad-model', 'frontmatter.model'],
      ['bad-name.md', 'Upper_Case', 'frontmatter.name'],
      ['bad-tools.md', 'bad-tools', 'frontmatter.tools'],
      ['bad-yaml.md', 'bad-yaml', 'frontmatter'],
      ['dup-key.md', 'dup-key', 'frontmatter'],
      ['long-description.md', 'long-description', 'frontmatter.description'],
      ['missing-name.md', 'missing-name', 'frontmatter.name'],
      ['no-frontmatter.md', 'no-frontmatter', 'frontmatter'],
      ['not-a-map.md', 'not-a-map', 'frontmatter'],
    ]);
    for (const d of plugin.diagnostics) expect(d.file.startsWith(pathToFileURL(path.join(root, 'agents')).href)).toBe(true);
    // The load message stays bounded however many files are bad; every diagnostic stays available.
    expect(plugin.load).toMatchObject({ message: expect.stringMatching(/and 5 more$/) });
  });

  it('keeps the first of two agents with the same name (by file name) and reports the second', async () => {
    const plugin = await read('broken-duplicate-agent');
    expect(plugin.agents).toMatchObject([{ name: 'dup-agents:twin', description: 'the first twin' }]);
    expect(plugin.diagnostics).toMatchObject([{ agent: 'twin', field: 'frontmatter.name', message: 'is already the name of the agent in a-twin.md; agent skipped' }]);
  });
});
