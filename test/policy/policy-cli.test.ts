/** `portcullis check` reports policy problems: the compiled CLI as a child process, argv only. */
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI_JS = join(ROOT, 'dist/src/main.js');
const SECRET_URL = 'https://intranet.example.net/mcp?token=s3cr3t-url-token';
const SECRET_VALUE = '--require=/tmp/s3cr3t-hook.js';

const dir = mkdtempSync(join(tmpdir(), 'portcullis-policy-cli-'));
beforeAll(() => {
  if (!existsSync(CLI_JS)) throw new Error(`${CLI_JS} is missing: run \`npx tsc -p tsconfig.json\` first`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function check(config: unknown): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const path = join(dir, `gateway-${randomUUID()}.json`);
  writeFileSync(path, JSON.stringify(config));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_JS, 'check', '--config', path], {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('hang guard: portcullis check did not exit within 20 s'));
    }, 20_000);
    child.once('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('portcullis check', () => {
  it('lists every widening attempt against a policy file next to the config, echoing no value', async () => {
    writeFileSync(join(dir, 'team.json'), JSON.stringify({ privateNetwork: { allowServers: false }, upstreamHosts: ['*.example.com'] }));
    const result = await check({
      policy: './team.json',
      servers: {
        docs: { transport: 'streamableHttp', url: SECRET_URL, allowPrivateNetwork: true },
        files: { transport: 'stdio', command: 'node', env: { NODE_OPTIONS: SECRET_VALUE } },
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('servers.docs.allowPrivateNetwork: the policy does not allow private-network upstreams');
    expect(result.stderr).toContain("servers.docs.url: host is not in the policy's upstreamHosts");
    expect(result.stderr).toContain('servers.files.env.NODE_OPTIONS: the policy forbids setting this variable');
    expect(result.stderr).not.toContain('s3cr3t');
    expect(result.stderr).not.toContain('intranet');
    expect(result.stdout).toBe('');
  });

  it('accepts a config within the shipped strict policy', async () => {
    const result = await check({ policy: 'strict', servers: { files: { transport: 'stdio', command: 'node', env: { DEBUG: '1' } } } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^configuration ok/);
  });

  it('reports a policy file that cannot be read', async () => {
    const result = await check({ policy: './nowhere.json', servers: {} });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('policy: cannot read the policy file (ENOENT)');
  });
});

describe('portcullis check: what a stdio entry may set and run', () => {
  const SECRET_PATH = '/tmp/s3cr3t-dir/openssl.cnf';

  it('refuses OPENSSL_CONF and HOME under strict, naming each variable and echoing no value', async () => {
    const result = await check({
      policy: 'strict',
      servers: { files: { transport: 'stdio', command: 'npx', args: ['-y', 'some-server'], env: { OPENSSL_CONF: SECRET_PATH, HOME: '/tmp/s3cr3t-home' } } },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('servers.files.env.OPENSSL_CONF: the policy forbids setting this variable');
    expect(result.stderr).toContain('servers.files.env.HOME: the policy forbids setting this variable');
    expect(result.stderr).not.toContain('s3cr3t');
    expect(result.stdout).toBe('');
  });

  it('refuses under strict a variable its allowlist does not name, and accepts one it does', async () => {
    const refused = await check({ policy: 'strict', servers: { files: { transport: 'stdio', command: 'node', env: { MY_SETTING: 's3cr3t-value' } } } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("servers.files.env.MY_SETTING: not a variable the policy's stdioAllowedEnv allows");
    expect(refused.stderr).not.toContain('s3cr3t');
    const accepted = await check({ policy: 'strict', servers: { files: { transport: 'stdio', command: 'node', env: { LANG: 'C.UTF-8', TZ: 'UTC' } } } });
    expect(accepted.stderr).toBe('');
    expect(accepted.code).toBe(0);
  });

  it('refuses under the default policy every variable of the config-file, TLS, package-manager and toolchain class', async () => {
    const names = [
      'OPENSSL_CONF', 'SSL_CERT_FILE', 'HOME', 'XDG_CONFIG_HOME', 'PIP_CONFIG_FILE', 'PIP_INDEX_URL', 'UV_PYTHON',
      'NPM_CONFIG_USERCONFIG', 'YARN_NPM_REGISTRY_SERVER', 'PNPM_HOME', 'CURL_HOME', 'GIT_DIR', 'SSH_AUTH_SOCK',
      'GNUPGHOME', 'KUBECONFIG', 'DOCKER_HOST', 'CARGO_HOME', 'RUSTUP_TOOLCHAIN', 'GOFLAGS', 'GOPROXY', 'DENO_DIR',
      'BUN_CONFIG_REGISTRY', 'BUNDLE_GEMFILE', 'GEM_HOME', 'MAVEN_OPTS', 'GRADLE_OPTS', 'JAVA_HOME', 'NODE_EXTRA_CA_CERTS',
      'REQUESTS_CA_BUNDLE', 'AWS_CONFIG_FILE',
    ];
    const env = Object.fromEntries(names.map((name) => [name, SECRET_PATH]));
    const result = await check({ servers: { files: { transport: 'stdio', command: 'node', env: { ...env, DEBUG: '1' } } } });
    expect(result.code).toBe(1);
    for (const name of names) expect(result.stderr).toContain(`servers.files.env.${name}: the policy forbids setting this variable`);
    expect(result.stderr).not.toContain('DEBUG');
    expect(result.stderr).not.toContain('s3cr3t');
  });

  it('refuses a command the policy\'s stdioCommands does not list, and PATH while it is present', async () => {
    writeFileSync(join(dir, 'commands.json'), JSON.stringify({ stdioCommands: ['node', '/usr/bin/python3'] }));
    const result = await check({
      policy: './commands.json',
      servers: {
        npx: { transport: 'stdio', command: 'npx', args: ['-y', 'x'] },
        lookalike: { transport: 'stdio', command: '/tmp/s3cr3t/node' },
        pathed: { transport: 'stdio', command: 'node', env: { PATH: '/tmp/s3cr3t' } },
        python: { transport: 'stdio', command: '/usr/bin/../bin/python3' },
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("servers.npx.command: not a command the policy's stdioCommands allows");
    expect(result.stderr).toContain("servers.lookalike.command: not a command the policy's stdioCommands allows");
    expect(result.stderr).toContain('servers.pathed.env.PATH: the policy forbids setting this variable');
    expect(result.stderr).not.toContain('servers.python');
    expect(result.stderr).not.toContain('s3cr3t');
  });

  it('refuses a working directory under strict', async () => {
    const result = await check({ policy: 'strict', servers: { files: { transport: 'stdio', command: 'node', cwd: '/tmp/s3cr3t-project' } } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('servers.files.cwd: the policy does not allow choosing the working directory');
    expect(result.stderr).not.toContain('s3cr3t');
  });
});

describe('portcullis check: every URL the config names', () => {
  const JWKS_URL = 'https://idp.s3cret-host.example/jwks.json?token=s3cr3t-token';
  const REDIS_URL = 'redis://:s3cr3t-password@10.0.0.5:6379';
  const METADATA_URL = 'http://169.254.169.254:8787';
  const jwt = (url: string, allowPrivateNetwork: boolean) => ({ kind: 'jwt', jwks: { url, allowPrivateNetwork }, issuer: 'https://idp.example/', audience: 'portcullis' });

  function expectNoUrl(stderr: string): void {
    for (const part of ['s3cr3t', 's3cret', '10.0.0.5', '169.254.169.254', 'idp.']) expect(stderr).not.toContain(part);
  }

  it('refuses under strict a JWKS URL opted into the private network, naming the field', async () => {
    const result = await check({ policy: 'strict', auth: jwt(JWKS_URL, true), servers: {} });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("auth.jwks.url: host is not in the policy's infrastructureHosts");
    expectNoUrl(result.stderr);
  });

  it('refuses under strict a private Redis and a cluster advertiseUrl at the metadata address, naming each field', async () => {
    const result = await check({
      policy: 'strict',
      eventStore: { kind: 'redis', url: REDIS_URL, allowPrivateNetwork: true },
      cluster: { advertiseUrl: METADATA_URL, allowPrivateNetwork: true },
      servers: {},
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("eventStore.url: host is not in the policy's infrastructureHosts");
    expect(result.stderr).toContain("cluster.advertiseUrl: host is not in the policy's infrastructureHosts");
    expectNoUrl(result.stderr);
  });

  it('refuses plaintext beyond loopback for the gateway\'s own connections unless their field opts into the private network', async () => {
    const result = await check({
      auth: jwt('http://idp.s3cret-host.example/jwks.json', false),
      servers: {},
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('auth.jwks.url: uses http: to a non-loopback host; use https: (or set auth.jwks.allowPrivateNetwork for a host on your private network)');
    const cluster = await check({ eventStore: { kind: 'redis', url: REDIS_URL }, cluster: { advertiseUrl: METADATA_URL }, servers: {} });
    expect(cluster.code).toBe(1);
    expect(cluster.stderr).toContain('eventStore.url: uses redis: to a non-loopback host; use rediss: (or set eventStore.allowPrivateNetwork for a host on your private network)');
    expect(cluster.stderr).toContain('cluster.advertiseUrl: uses http: to a non-loopback host; use https: (or set cluster.allowPrivateNetwork for a host on your private network)');
    expectNoUrl(result.stderr + cluster.stderr);
  });

  it('refuses every private-network opt-in of the gateway\'s own connections when the policy forbids them', async () => {
    writeFileSync(join(dir, 'no-infra.json'), JSON.stringify({ privateNetwork: { allowInfrastructure: false } }));
    const result = await check({
      policy: './no-infra.json',
      eventStore: { kind: 'redis', url: REDIS_URL, allowPrivateNetwork: true },
      cluster: { advertiseUrl: METADATA_URL, allowPrivateNetwork: true },
      servers: {},
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("eventStore.allowPrivateNetwork: the policy does not allow private-network connections for the gateway's own services");
    expect(result.stderr).toContain("cluster.allowPrivateNetwork: the policy does not allow private-network connections for the gateway's own services");
    expectNoUrl(result.stderr);
  });

  it('accepts them once a copy of strict lists their hosts in infrastructureHosts', async () => {
    writeFileSync(join(dir, 'strict-infra.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(ROOT, 'policies/strict.json'), 'utf8')), infrastructureHosts: ['10.0.0.5', '169.254.169.254'] }));
    const result = await check({
      policy: './strict-infra.json',
      eventStore: { kind: 'redis', url: REDIS_URL, allowPrivateNetwork: true },
      cluster: { advertiseUrl: METADATA_URL, allowPrivateNetwork: true },
      servers: {},
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
