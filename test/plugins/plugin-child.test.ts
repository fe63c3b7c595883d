/**
 * A plugin declaration run for real: the stdio config a fixture plugin becomes is handed to the
 * gateway's own stdio connector, and the child reports what it was started with.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { StdioServerConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/observability/logger.js';
import { readPlugin } from '../../src/plugins/read-plugin.js';
import { createStdioTransport } from '../../src/upstream/stdio.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { fixture, tempDir } from './plugin-test-helpers.js';

const stateDir = tempDir('portcullis-plugin-state-');
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(() => {
  killAllStdioChildren();
});

async function startedWith(pluginDir: string, server: string): Promise<Record<string, unknown>> {
  const plugin = await readPlugin(pluginDir, { stateDir });
  const declared = plugin.servers.find((s) => s.serverName === server);
  if (declared === undefined || !declared.supported) throw new Error(`no runnable server ${server}`);
  const parentEnv = { ...process.env, GATEWAY_SECRET: 'must-not-reach-the-child' };
  const transport = createStdioTransport(declared.name, declared.config as StdioServerConfig, parentEnv, silentLogger());
  const client = new Client({ name: 'plugin-test', version: '0.0.0' });
  clients.push(client);
  await client.connect(transport);
  const result = await client.callTool({ name: 'whereami', arguments: {} });
  const [content] = result.content as { type: string; text: string }[];
  return JSON.parse(content?.text ?? 'null') as Record<string, unknown>;
}

describe('a plugin stdio server as the gateway starts it', () => {
  it('runs the ./ command in its cwd with PLUGIN_ROOT, PLUGIN_DATA and expanded args and env', async () => {
    const root = realpathSync(fixture('agent-plugins-valid'));
    const data = path.join(realpathSync(stateDir), 'plugin-data', 'ap-tools');
    expect(await startedWith(fixture('agent-plugins-valid'), 'files')).toEqual({
      cwd: path.join(root, 'bin'),
      argv: ['--root', `${root}/config`, `--data=${data}`, '--greeting=héllo 🚀', '${HOME}'],
      PLUGIN_ROOT: root,
      PLUGIN_DATA: data,
      DATA_DIR: `${data}/files`,
      GATEWAY_SECRET: null,
    });
  });

  it('runs a bare command found on PATH with the Claude Code placeholders expanded', async () => {
    const root = realpathSync(fixture('claude-code-valid'));
    const data = path.join(realpathSync(stateDir), 'plugin-data', 'cc-suite');
    expect(await startedWith(fixture('claude-code-valid'), 'db')).toMatchObject({
      cwd: root,
      argv: ['--cache', `${data}/cache`],
      PLUGIN_ROOT: root,
      PLUGIN_DATA: data,
      GATEWAY_SECRET: null,
    });
  });
});
