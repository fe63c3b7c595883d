/**
 * `portcullis import` from real files in each source's format (test/fixtures/import/): Cursor,
 * VS Code (with `inputs`), Claude Desktop, and MCP registry `server.json` files (npm, oci/pypi,
 * remotes, the registry API's `{ server }` answer). Each import must be a config the gateway
 * loads and, once the variables it names are exported, passes `check`'s rules — with no secret
 * of the source in the output, and no placeholder passed through.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importMcpJson, type ImportResult } from '../../src/config/import-mcp-json.js';
import { parseConfig } from '../../src/config/load.js';
import { preflight } from '../../src/composition/preflight.js';
import { ConfigError } from '../../src/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = join(ROOT, 'test/fixtures/import');

function imported(file: string): ImportResult {
  return importMcpJson(readFileSync(join(FIXTURES, file), 'utf8'));
}

/** The config loads, and with every variable it asks for exported, check's rules pass. */
function expectRunnable(result: ImportResult): void {
  const env = Object.fromEntries(result.exports.map((e) => [e.name, 'value-for-test']));
  const checked = preflight(parseConfig(result.config), env);
  expect(checked.problems).toEqual([]);
}

describe('importing a Cursor file', () => {
  const result = imported('cursor-mcp.json');

  it('keeps a header reference as written, so the variable Cursor read is the one the gateway reads', () => {
    expect(result.config.servers['internal-docs']).toEqual({
      transport: 'auto',
      url: 'https://mcp.internal.example.com/mcp',
      headers: { Authorization: 'Bearer ${env:INTERNAL_MCP_TOKEN}' },
    });
    expect(result.exports).toContainEqual({ name: 'INTERNAL_MCP_TOKEN', value: '<the value of INTERNAL_MCP_TOKEN the source read>', why: 'servers.internal-docs header Authorization' });
  });

  it('imports a URL whose transport the file does not name as auto, as Cursor itself tries Streamable HTTP then HTTP+SSE, and says so', () => {
    expect(result.config.servers['internal-docs']?.transport).toBe('auto');
    expect(result.notes.some((note) => note.startsWith('servers.internal-docs:') && note.includes('"transport": "auto"'))).toBe(true);
  });

  it('classifies a bare /sse URL as HTTP+SSE and says so', () => {
    expect(result.config.servers['legacy-search']).toEqual({ transport: 'sse', url: 'https://search.example.com/sse' });
    expect(result.notes.join('\n')).toMatch(/servers\.legacy-search: its url ends in \/sse: imported as "transport": "sse"/);
  });

  it("writes a stdio server's literal secret as a reference instead of dropping it, and never the value", () => {
    expect(result.config.servers['github']).toEqual({
      transport: 'stdio',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-github'],
      env: { GITHUB_PERSONAL_ACCESS_TOKEN: '${env:GITHUB_PERSONAL_ACCESS_TOKEN}', GITHUB_API_URL: 'https://api.github.com' },
    });
    expect(result.exports).toContainEqual({
      name: 'GITHUB_PERSONAL_ACCESS_TOKEN',
      value: '<the GITHUB_PERSONAL_ACCESS_TOKEN value from the imported file>',
      why: 'servers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN',
    });
    expect(JSON.stringify(result)).not.toContain('ghp_');
  });

  it('keeps a placeholder the gateway never expands, names it, and the config then fails the check naming the argument', () => {
    expect(result.notes).toContain('servers.workspace-files.args[2]: ${workspaceFolder} is not expanded by the gateway; replace it with its value (check refuses it until then)');
    const problems = (() => {
      try {
        parseConfig(result.config);
        return [];
      } catch (error) {
        return [...(error as ConfigError).problems];
      }
    })();
    expect(problems).toEqual([expect.stringMatching(/^servers\.workspace-files\.args\[2\]: \$\{workspaceFolder\} is not expanded by the gateway/)]);
    const { 'workspace-files': _, ...rest } = result.config.servers;
    expectRunnable({ ...result, config: { servers: rest } });
  });
});

describe('importing a VS Code mcp.json with inputs', () => {
  const result = imported('vscode-mcp.json');

  it('reads each input from one variable named after it, wherever it is used', () => {
    expect(result.config.servers['perplexity']?.['env']).toEqual({ PERPLEXITY_API_KEY: '${env:PERPLEXITY_KEY}' });
    expect(result.config.servers['my-remote']?.['headers']).toEqual({ 'X-Api-Key': '${env:PERPLEXITY_KEY}', 'X-Client': 'vscode' });
    expect(result.exports).toEqual([{ name: 'PERPLEXITY_KEY', value: '<Perplexity API Key>', why: 'servers.perplexity.env.PERPLEXITY_API_KEY, servers.my-remote header X-Api-Key' }]);
    expectRunnable(result);
  });
});

describe('importing a Claude Desktop config', () => {
  const result = imported('claude_desktop_config.json');

  it('turns literal secrets into references, renaming a variable the default policy would never let the gateway read', () => {
    expect(result.config.servers['brave-search']?.['env']).toEqual({ BRAVE_API_KEY: '${env:BRAVE_API_KEY}' });
    // VAULT_TOKEN is in envHeaderNames' default deny list: the gateway reads another name and sets VAULT_TOKEN in the child.
    expect(result.config.servers['vault-helper']?.['env']).toEqual({ VAULT_TOKEN: '${env:VAULT_HELPER_VAULT_TOKEN}' });
    expect(result.config.servers['filesystem']).toEqual({ transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop', '/Users/me/Downloads'] });
    expect(JSON.stringify(result)).not.toMatch(/l1teral/);
    expectRunnable(result);
  });
});

describe('importing a server named after a property every JavaScript object has', () => {
  it('renames constructor and toString so the config loads, keeping every server', () => {
    const result = importMcpJson('{ "mcpServers": { "constructor": { "command": "node" }, "toString": { "url": "https://tools.example.com/mcp" } } }');
    expect(Object.keys(result.config.servers).sort()).toEqual(['constructor-server', 'toString-server']);
    expectRunnable(result);
  });
});

describe('importing an MCP registry server.json', () => {
  it('runs an npm package with npx, its package arguments, and its secret and required variables as references', () => {
    const result = imported('registry-npm-server.json');
    expect(result.config.servers).toEqual({
      'local-weather': {
        transport: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-weather@1.0.0', '${env:LOCAL_WEATHER_CONFIG_PATH}', '--port', '8080'],
        env: { API_KEY: '${env:API_KEY}', WEATHER_UNITS: 'celsius' },
      },
    });
    expect(result.exports).toEqual([
      { name: 'API_KEY', value: '<Weather API key>', why: 'servers.local-weather.env.API_KEY' },
      { name: 'LOCAL_WEATHER_CONFIG_PATH', value: '<Path to the weather config>', why: 'packages[0].packageArguments[0]' },
    ]);
    expect(result.notes).toContain('servers.local-weather.env.WEATHER_DEBUG: optional and without a default; left out (set it in env to use it)');
    expectRunnable(result);
  });

  it('runs the first package it can (oci over nuget) with docker, passing each variable into the container', () => {
    const result = imported('registry-pypi-oci-server.json');
    expect(result.config.servers).toEqual({
      'database-manager': {
        transport: 'stdio',
        command: 'docker',
        args: ['run', '-i', '--rm', '--network', 'host', '-e', 'DB_TYPE=postgres', '-e', 'DB_USERNAME', '-e', 'DB_PASSWORD', 'docker.io/example/database-manager-mcp:3.1.0', '--host', 'localhost'],
        env: { DB_USERNAME: '${env:DB_USERNAME}', DB_PASSWORD: '${env:DB_PASSWORD}' },
      },
    });
    expect(result.notes).toContain('packages[0] (nuget): not a package type the gateway runs (npm, pypi, oci); skipped');
    expect(result.notes).toContain('also offered, not imported: packages[2] (the first one the gateway can run was taken)');
    expectRunnable(result);
  });

  it('imports a remote (the registry API answer shape), its URL variables and secret header as references', () => {
    const result = imported('registry-remote-server.json');
    expect(result.config.servers).toEqual({
      'tenant-api': {
        transport: 'streamableHttp',
        url: 'https://${env:TENANT_API_TENANT_ID}.api.example.com/mcp',
        headers: { Authorization: 'Bearer ${env:API_TOKEN}', 'X-Region': 'us-east-1' },
      },
    });
    expect(result.exports.map((e) => e.name).sort()).toEqual(['API_TOKEN', 'TENANT_API_TENANT_ID']);
    expect(result.notes).toContain('also offered, not imported: remotes[1] (the first one the gateway can run was taken)');
    // With the tenant exported, the URL is filled in and judged like any other.
    const checked = preflight(parseConfig(result.config), { TENANT_API_TENANT_ID: 'acme', API_TOKEN: 't0k' });
    expect(checked.problems).toEqual([]);
    expect((checked.config.servers['tenant-api'] as { url: string }).url).toBe('https://acme.api.example.com/mcp');
  });

  it('refuses a server.json with nothing the gateway can run, saying why', () => {
    expect(() => importMcpJson(JSON.stringify({ name: 'io.x/y', description: 'd', version: '1', packages: [{ registryType: 'mcpb', identifier: 'https://github.com/x/y.mcpb', transport: { type: 'stdio' } }] }))).toThrow(
      /offers nothing the gateway can run \(packages\[0\] \(mcpb\): not a package type the gateway runs/,
    );
  });
});

describe('portcullis import as a process', () => {
  const CLI_JS = join(ROOT, 'dist/src/main.js');

  it('prints a registry server.json as a config and the variables to export, exit 0', () => {
    if (!existsSync(CLI_JS)) throw new Error(`${CLI_JS} is missing: run \`npx tsc -p tsconfig.json\` first`);
    const run = spawnSync(process.execPath, [CLI_JS, 'import', join(FIXTURES, 'registry-npm-server.json')], { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH ?? '' } });
    expect(run.status).toBe(0);
    expect(Object.keys(JSON.parse(run.stdout).servers)).toEqual(['local-weather']);
    expect(run.stderr).toContain('export API_KEY=<Weather API key>   # servers.local-weather.env.API_KEY');
  });
});
