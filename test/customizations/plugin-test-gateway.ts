/**
 * Shared by the customisation tests: plugins written into temporary directories whose stdio
 * server is the `whereami` fixture (run by `node`, found on PATH), and a real gateway on
 * 127.0.0.1:0 configured with them and a throw-away state directory.
 */
import { realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { within, type Cleanup } from '../integration/harness/wait.js';
import { agentPlugin, fixture, tempDir, type FileSpec } from '../plugins/plugin-test-helpers.js';

/** The fixture server that reports its cwd, argv and plugin variables (tool `whereami`). */
export const WHEREAMI = realpathSync(fixture('whereami-server.mjs'));

/** A stdio entry of an Agent Plugins `mcp.json` running the whereami fixture. */
export function whereamiEntry(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'stdio', command: 'node', args: [WHEREAMI], ...extra };
}

/** An Agent Plugins 1.0 plugin in a fresh temporary directory; returns its directory. */
export function writePlugin(name: string, servers: Record<string, unknown>, extra: Record<string, FileSpec> = {}): string {
  return agentPlugin(tempDir(`portcullis-plugin-${name.slice(0, 20)}-`), name, servers, extra);
}

export interface PluginGateway {
  gateway: RunningGateway;
  stateDir: string;
  configDir: string;
}

/**
 * Starts a gateway in this process whose config (written to a file in a fresh directory, so
 * relative paths and `configFile` behave as for an operator) holds `config`.
 */
export async function startPluginGateway(cleanup: Cleanup, config: Record<string, unknown>, policy?: Record<string, unknown>): Promise<PluginGateway> {
  const configDir = realpathSync(tempDir('portcullis-config-'));
  const stateDir = path.join(configDir, 'state');
  const raw = { listen: { host: '127.0.0.1', port: 0 }, stateDir, servers: {}, ...config, ...(policy === undefined ? {} : { policy: './policy.json' }) };
  if (policy !== undefined) writeFileSync(path.join(configDir, 'policy.json'), JSON.stringify(policy));
  const file = path.join(configDir, 'gateway.json');
  writeFileSync(file, JSON.stringify(raw, null, 2));
  const parsed = parseConfig(raw, { baseDir: configDir, file });
  const gateway = await startGateway({ config: parsed, logger: silentLogger(), env: process.env });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
  return { gateway, stateDir, configDir };
}
