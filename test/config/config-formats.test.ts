/**
 * Config as users already write it: JSON with comments and trailing commas (docs/reference.md's own
 * example), a `$schema` key for editors, syntax errors with line and column; the JSON Schema
 * generated from the zod schema and kept equal to schema/gateway.schema.json; `portcullis
 * import` of the other hosts' formats, secrets turned into variables.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/config-text.js';
import { gatewayJsonSchemaText } from '../../src/config/json-schema.js';
import { importMcpJson } from '../../src/config/import-mcp-json.js';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function problemsOf(text: string): string[] {
  try {
    parseConfigText(text);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('config text', () => {
  it("parses the reference's JSONC example, comments and all", () => {
    const readme = readFileSync(join(root, 'docs/reference.md'), 'utf8');
    const example = /```jsonc\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    const config = parseConfig(parseConfigText(example!));
    expect(Object.keys(config.servers)).toEqual(['files', 'docs', 'old', 'either']);
    expect(config.servers.either?.transport).toBe('auto');
  });

  it('accepts a $schema key and refuses one that is not a string', () => {
    expect(parseConfig({ $schema: './schema/gateway.schema.json', servers: {} }).servers).toEqual({});
    expect(() => parseConfig({ $schema: 1, servers: {} })).toThrow(/\$schema: must be a string/);
  });

  it('reports a syntax error with its line and column, never the text around it', () => {
    const problems = problemsOf('{\n  "servers": {\n    "a": { "command": "s3cr3t-tool" }\n  }\n  oops\n}\n');
    expect(problems).toEqual(['config: invalid JSON at line 5, column 3: unexpected character']);
    expect(problemsOf('{ "servers": { "a": ')).toEqual(['config: invalid JSON at line 1, column 21: a value was expected']);
  });
});

describe('the JSON Schema', () => {
  it('is the zod schema as generated, byte for byte (regenerate: node dist/src/main.js schema > schema/gateway.schema.json)', () => {
    expect(readFileSync(join(root, 'schema/gateway.schema.json'), 'utf8')).toBe(gatewayJsonSchemaText());
  });

  it('describes the servers, the policy reference and the $schema key', () => {
    const schema = JSON.parse(gatewayJsonSchemaText()) as { properties: Record<string, unknown>; additionalProperties: unknown };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['$schema', 'servers', 'listen', 'policy']));
    expect(schema.additionalProperties).toBe(false);
  });
});

describe('portcullis import', () => {
  it('converts a VS Code mcp.json with inputs, turning referenced and literal secrets into ${env:NAME} references', () => {
    const text = `{
      // .vscode/mcp.json
      "inputs": [{ "type": "promptString", "id": "gh", "description": "GitHub token", "password": true }],
      "servers": {
        "github": { "type": "http", "url": "https://api.example.com/mcp/", "headers": { "Authorization": "Bearer \${input:gh}", "X-Team": "core" } },
        "docs": { "type": "sse", "url": "https://docs.example.com/sse", "headers": { "X-Api-Key": "s3cr3t-literal" } },
        "files": { "type": "stdio", "command": "npx", "args": ["-y", "server-filesystem"], "env": { "LOG_LEVEL": "debug", "GITHUB_TOKEN": "\${env:GITHUB_TOKEN}" } },
      },
    }`;
    const result = importMcpJson(text);
    expect(result.config.servers['github']).toEqual({ transport: 'auto', url: 'https://api.example.com/mcp/', headers: { Authorization: 'Bearer ${env:GH}', 'X-Team': 'core' } });
    expect(result.config.servers['docs']).toEqual({ transport: 'sse', url: 'https://docs.example.com/sse', headers: { 'X-Api-Key': '${env:DOCS_X_API_KEY}' } });
    expect(result.config.servers['files']).toEqual({ transport: 'stdio', command: 'npx', args: ['-y', 'server-filesystem'], env: { LOG_LEVEL: 'debug', GITHUB_TOKEN: '${env:GITHUB_TOKEN}' } });
    expect(result.exports).toEqual([
      { name: 'GH', value: '<GitHub token>', why: 'servers.github header Authorization' },
      { name: 'DOCS_X_API_KEY', value: '<the X-Api-Key value from the imported file>', why: 'servers.docs header X-Api-Key' },
      { name: 'GITHUB_TOKEN', value: '<the value of GITHUB_TOKEN the source read>', why: 'servers.files.env.GITHUB_TOKEN' },
    ]);
    expect(JSON.stringify(result)).not.toContain('s3cr3t');
    // What it writes is a config the gateway loads.
    expect(Object.keys(parseConfig(result.config).servers)).toEqual(['github', 'docs', 'files']);
  });

  it('converts Claude Desktop / Cursor / Agent Plugins mcpServers blocks', () => {
    const result = importMcpJson(
      JSON.stringify({
        mcpServers: {
          'my notes': { command: 'node', args: ['notes.js'], env: { NOTES_DIR: '/tmp/notes', OPENAI_API_KEY: 'sk-s3cr3t' } },
          remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer s3cr3t' } },
          broken: { args: ['x'] },
        },
      }),
    );
    expect(Object.keys(result.config.servers)).toEqual(['my-notes', 'remote']);
    expect(result.config.servers['my-notes']).toEqual({ transport: 'stdio', command: 'node', args: ['notes.js'], env: { NOTES_DIR: '/tmp/notes', OPENAI_API_KEY: '${env:OPENAI_API_KEY}' } });
    expect(result.config.servers['remote']?.['headers']).toEqual({ Authorization: 'Bearer ${env:REMOTE_AUTHORIZATION}' });
    expect(result.notes).toContain('servers.broken: skipped (needs "command" or "url")');
    expect(JSON.stringify(result)).not.toContain('s3cr3t');
    expect(Object.keys(parseConfig(result.config).servers)).toEqual(['my-notes', 'remote']);
  });

  it('refuses a file with no server list, and reports syntax errors with line and column', () => {
    expect(() => importMcpJson('{ "other": 1 }')).toThrow('the file has no "mcpServers" or "servers" object (nor is it a registry server.json)');
    expect(() => importMcpJson('{\n  "mcpServers": {,\n}')).toThrow(ConfigError);
  });
});

describe('the CLI', () => {
  const cli = (args: string[]) => spawnSync(process.execPath, [join(root, 'dist/src/main.js'), ...args], { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env['PATH'] ?? '' } });

  it('prints the schema file with `portcullis schema`', () => {
    const run = cli(['schema']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(readFileSync(join(root, 'schema/gateway.schema.json'), 'utf8'));
  });

  it('imports a file with `portcullis import`: the config on stdout, the variables to export on stderr', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-import-'));
    try {
      const file = join(dir, 'claude_desktop_config.json');
      writeFileSync(file, JSON.stringify({ mcpServers: { remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer s3cr3t' } } } }));
      const run = cli(['import', file]);
      expect(run.status).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ servers: { remote: { transport: 'auto', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${env:REMOTE_AUTHORIZATION}' } } } });
      expect(run.stderr).toContain('export REMOTE_AUTHORIZATION=<the Authorization credential from the imported file>');
      expect(run.stdout + run.stderr).not.toContain('s3cr3t');
      expect(cli(['import', join(dir, 'missing.json')]).stderr).toBe('portcullis import: cannot read the file (ENOENT)\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

