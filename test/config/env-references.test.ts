/**
 * `${env:NAME}` and `${input:ID}` in an operator's config file (src/config/env-references.ts):
 * how values are read as templates, which placeholders are refused, how VS Code's `inputs` map to
 * variables, the policy over the variables read, and the environment stage that `check` and the
 * start share (config/environment.ts, composition/preflight.ts). Pure: no process, no socket.
 */
import { describe, expect, it } from 'vitest';
import { expandTemplate, parseInputs, parseTemplate } from '../../src/config/env-references.js';
import { resolveEnvironment } from '../../src/config/environment.js';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { preflight } from '../../src/composition/preflight.js';
import { compileSessionServersGate } from '../../src/config/session-servers.js';
import { compileOutboundHeaders } from '../../src/policy/outbound-headers.js';
import { configSecrets } from '../../src/config/secrets.js';
import { Redactor } from '../../src/observability/logger.js';

const NO_INPUTS = new Map<string, string | undefined>();

function problemsOf(raw: unknown): string[] {
  try {
    parseConfig(raw);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('reading a value as a template', () => {
  it.each([
    ['plain text', 'Bearer abc', undefined],
    ['one reference', '${env:TOKEN}', [{ env: 'TOKEN' }]],
    ['text around references', 'Bearer ${env:T1}.${env:T2}!', ['Bearer ', { env: 'T1' }, '.', { env: 'T2' }, '!']],
    ['a lone dollar', 'price $5', undefined],
  ])('%s', (_, value, template) => {
    const parsed = parseTemplate(value, NO_INPUTS);
    expect(parsed).toEqual({ ok: true, template });
  });

  it.each([
    ["VS Code's workspaceFolder", '${workspaceFolder}/x', /^\$\{workspaceFolder\} is not expanded by the gateway; only \$\{env:NAME\} and \$\{input:ID\} are$/],
    ["Claude Code's bare variable", 'Bearer ${TOKEN}', /write \$\{env:TOKEN\} to read the environment variable/],
    ['a bad variable name', '${env:MY-TOKEN}', /does not name an environment variable/],
    ['an unknown input', '${input:nope}', /\$\{input:nope\} names no entry of "inputs"/],
    ['an unclosed placeholder', 'Bearer ${env:TOKEN', /without a closing "\}"/],
    ['an unclosed placeholder after a good one', '${env:A}-${env:B', /without a closing "\}"/],
  ])('refuses %s, naming the placeholder', (_, value, message) => {
    const parsed = parseTemplate(value, NO_INPUTS);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toMatch(message);
  });

  it('fills a template in whole, or names the first unset variable and builds nothing', () => {
    const template = ['Bearer ', { env: 'A' }, '.', { env: 'B' }] as const;
    expect(expandTemplate(template, (name) => ({ A: 'x', B: 'y' })[name])).toEqual({ ok: true, value: 'Bearer x.y' });
    expect(expandTemplate(template, (name) => ({ A: 'x' })[name as 'A'])).toEqual({ ok: false, variable: 'B' });
  });
});

describe("VS Code's inputs", () => {
  const vscode = (inputs: unknown[], headers: Record<string, string>) => ({
    inputs,
    servers: { api: { type: 'http', url: 'https://api.example.com/mcp', headers } },
  });

  it('reads an input from the variable its "portcullis" entry names', () => {
    const config = parseConfig(
      vscode([{ type: 'promptString', id: 'api-key', description: 'API key', password: true, portcullis: { env: 'API_KEY' } }], { Authorization: 'Bearer ${input:api-key}' }),
    );
    const server = config.servers.api!;
    expect(server.envReferences?.headers.Authorization).toEqual(['Bearer ', { env: 'API_KEY' }]);
    expect(server.envReferences?.variables).toEqual([{ variable: 'API_KEY', field: 'servers.api.headers.Authorization' }]);
  });

  it('refuses an input the operator gave no variable, naming the input and how to give one', () => {
    const problems = problemsOf(vscode([{ type: 'promptString', id: 'api-key', password: true }], { Authorization: 'Bearer ${input:api-key}' }));
    expect(problems).toEqual([
      'servers.api.headers.Authorization: ${input:api-key}: the gateway cannot prompt for an input; give inputs entry "api-key" "portcullis": { "env": "NAME" } to read it from the variable NAME',
    ]);
  });

  it('refuses a malformed inputs block, naming the entry', () => {
    expect(parseInputs([{ id: 'a', portcullis: { env: 'not a name' } }, { type: 'x' }]).problems).toEqual([
      'inputs[0].portcullis: must be { "env": "NAME" } naming the environment variable to read',
      'inputs[1]: must be an object with a string "id"',
    ]);
    expect(parseInputs({}).problems).toEqual(['inputs: must be an array (VS Code\'s "inputs")']);
  });
});

describe('references in an operator config', () => {
  it('compiles header values, stdio env values and args, and the url; plain values stay as they are', () => {
    const config = parseConfig({
      mcpServers: {
        remote: { url: 'https://${env:API_HOST}/mcp', headers: { Authorization: 'Bearer ${env:REMOTE_TOKEN}', 'X-Team': 'core' } },
        local: { command: 'node', args: ['server.js', '--key=${env:LOCAL_KEY}'], env: { LOCAL_TOKEN: '${env:LOCAL_TOKEN}', DEBUG: '1' } },
      },
    });
    const remote = config.servers.remote!;
    expect(remote.envReferences?.url).toEqual(['https://', { env: 'API_HOST' }, '/mcp']);
    expect(Object.keys(remote.envReferences?.headers ?? {})).toEqual(['Authorization']);
    const local = config.servers.local!;
    expect(local.envReferences?.args).toEqual({ 1: ['--key=', { env: 'LOCAL_KEY' }] });
    expect(local.envReferences?.env).toEqual({ LOCAL_TOKEN: [{ env: 'LOCAL_TOKEN' }] });
    expect(local.envReferences?.variables.map((v) => v.field)).toEqual(['servers.local.env.LOCAL_TOKEN', 'servers.local.args[1]']);
  });

  it('refuses a variable the policy keeps from envHeaders, in every field', () => {
    const problems = problemsOf({
      servers: {
        remote: { transport: 'streamableHttp', url: 'https://api.example.com/mcp', headers: { 'X-Key': '${env:AWS_SECRET_ACCESS_KEY}' } },
        local: { transport: 'stdio', command: 'node', args: ['${env:PORTCULLIS_CLUSTER_SECRET}'], env: { TOKEN: '${env:NPM_TOKEN}' } },
      },
    });
    expect(problems.sort()).toEqual([
      'servers.local.args[0]: the policy does not allow reading the variable PORTCULLIS_CLUSTER_SECRET (policy envHeaderNames)',
      'servers.local.env.TOKEN: the policy does not allow reading the variable NPM_TOKEN (policy envHeaderNames)',
      'servers.remote.headers.X-Key: the policy does not allow reading the variable AWS_SECRET_ACCESS_KEY (policy envHeaderNames)',
    ]);
  });

  it('refuses placeholders in command and cwd, which it never expands', () => {
    expect(problemsOf({ servers: { s: { command: '${env:NODE}', cwd: '${workspaceFolder}' } } }).sort()).toEqual([
      'servers.s.command: placeholders are not expanded in command; write the value',
      'servers.s.cwd: placeholders are not expanded in cwd; write the value',
    ]);
  });

  it('leaves the values of a server a client brings literal: no reference is compiled for it', () => {
    const policy = { ...parseConfig({ servers: {} }).policy, sessionServers: { allow: true, stdio: false, maxPerSession: 4 } };
    const checked = compileSessionServersGate(policy)({
      params: { _meta: { 'portcullis/servers': { theirs: { transport: 'streamableHttp', url: 'https://them.example.com/mcp', headers: { 'X-Steal': '${env:API_TOKEN}' } } } } },
    });
    expect(checked.ok).toBe(true);
    const server = checked.ok ? checked.servers!.theirs! : undefined;
    expect(server?.envReferences).toBeUndefined();
    // …so the header builder sends the text as written and reads no variable.
    const built = compileOutboundHeaders({ headers: (server as { headers: Record<string, string> }).headers, envHeaders: {} }).build({}, () => 'leaked');
    expect(built.headers['x-steal']).toBe('${env:API_TOKEN}');
  });
});

describe('the environment stage shared by check and the start', () => {
  const config = () =>
    parseConfig({
      servers: {
        remote: {
          transport: 'streamableHttp',
          url: 'https://${env:API_HOST}/mcp',
          headers: { Authorization: 'Bearer ${env:REMOTE_TOKEN}' },
          envHeaders: { 'X-Other': 'OTHER_TOKEN' },
        },
        local: { transport: 'stdio', command: 'node', args: ['${env:LOCAL_ARG}'] },
      },
    });

  it('names every unset variable and the field reading it, never a value', () => {
    const { problems } = resolveEnvironment(config(), { REMOTE_TOKEN: 's3cret-value' });
    expect([...problems].sort()).toEqual([
      'servers.local.args[0]: environment variable LOCAL_ARG is not set',
      'servers.remote.envHeaders.X-Other: environment variable OTHER_TOKEN is not set',
      'servers.remote.url: environment variable API_HOST is not set',
    ]);
  });

  it('fills the url in and judges it with the egress policy', () => {
    const env = { API_HOST: 'api.example.com', REMOTE_TOKEN: 't', OTHER_TOKEN: 'o', LOCAL_ARG: 'a' };
    const resolved = resolveEnvironment(config(), env);
    expect(resolved.problems).toEqual([]);
    expect((resolved.config.servers.remote as { url: string }).url).toBe('https://api.example.com/mcp');
    // Plaintext HTTP off the machine is refused once the URL is known, as if it had been written out.
    const plaintext = parseConfig({ servers: { r: { url: 'http://${env:H}/mcp' } } });
    expect(resolveEnvironment(plaintext, { H: 'api.example.com' }).problems).toEqual([expect.stringMatching(/^servers\.r\.url: /)]);
  });

  it('refuses a variable whose value cannot be a header value', () => {
    const { problems } = resolveEnvironment(config(), { API_HOST: 'h.example.com', REMOTE_TOKEN: 'a\r\nX-Injected: 1', OTHER_TOKEN: 'o', LOCAL_ARG: 'a' });
    expect(problems).toEqual(['servers.remote.headers.Authorization: environment variable REMOTE_TOKEN holds a character a header value cannot carry']);
  });

  it('preflight refuses a literal non-loopback bind without auth and warns of a /sse URL given as Streamable HTTP', () => {
    const checked = preflight(parseConfig({ listen: { host: '0.0.0.0' }, servers: { old: { url: 'https://old.example.com/sse' } } }), {});
    expect(checked.problems).toEqual([expect.stringMatching(/^listen\.host: refusing to serve on 0\.0\.0\.0: it is not a loopback address/)]);
    expect(checked.warnings).toEqual([expect.stringMatching(/^servers\.old\.url: ends in \/sse, .* set "transport": "sse"/)]);
  });
});

describe('the values references read', () => {
  it('join the secrets masked in every log line, whichever field reads them (short ones excepted)', () => {
    const config = parseConfig({
      servers: {
        remote: { url: 'https://${env:HOST}/mcp', headers: { Authorization: 'Bearer ${env:REMOTE_TOKEN}' } },
        local: { command: 'node', args: ['--key=${env:ARG_SECRET}'], env: { LEVEL: '${env:LEVEL}' } },
      },
    });
    const env = { HOST: 'tenant-7.example.com', REMOTE_TOKEN: 'tok-remote-0a1b2c', ARG_SECRET: 'arg-secret-3d4e5f', LEVEL: '1' };
    const secrets = configSecrets(config, env);
    expect(secrets).toEqual(expect.arrayContaining(['tenant-7.example.com', 'tok-remote-0a1b2c', 'arg-secret-3d4e5f']));
    expect(secrets).not.toContain('1');
    const line = new Redactor(secrets).redact('child said tok-remote-0a1b2c and arg-secret-3d4e5f');
    expect(line).not.toMatch(/tok-remote|arg-secret/);
  });
});
