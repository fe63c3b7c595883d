/** `portcullis check` reports policy problems: the compiled CLI as a child process, argv only. */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  const path = join(dir, `gateway-${Math.random().toString(36).slice(2)}.json`);
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
