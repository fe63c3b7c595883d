/**
 * The command line as a person meets it, through the real executable: `--version` prints the
 * package's version (the one a client is told in the handshake too), `portcullis help` lists every command, each command's own help shows its
 * usage and an example, and a command missing its argument (or an unknown one) answers a usage
 * error naming what is wrong, exit 2.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, ERAS, startTestGateway } from './harness/clients.js';
import { assertBuilt, CLI_JS, ROOT } from './harness/paths.js';
import { Cleanup } from './harness/wait.js';

const COMMANDS = ['start', 'check', 'reload', 'schema', 'import'] as const;

function portcullis(args: string[]) {
  return spawnSync(process.execPath, [CLI_JS, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH } });
}

const cleanup = new Cleanup();
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());

describe('the portcullis command line', () => {
  it('prints the package version for --version and -v', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const run = portcullis([flag]);
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe(`${version}\n`);
      expect(run.status).toBe(0);
    }
  });

  it.each(ERAS)('tells a %s client the same version in its handshake (serverInfo)', async (era) => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const gateway = await startTestGateway(cleanup, {});
    const { client } = await connectClient(cleanup, gateway.url, era);
    expect(client.getServerVersion()).toMatchObject({ name: 'portcullis', version });
  });

  it('lists every command for `portcullis help`, as for --help', () => {
    const help = portcullis(['help']);
    expect(help.status).toBe(0);
    for (const command of [...COMMANDS, 'help']) expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    expect(portcullis(['--help']).stdout).toBe(help.stdout);
  });

  it.each(COMMANDS)('gives `%s` its own help, with its usage and an example, both ways of asking', (command) => {
    const asked = portcullis(['help', command]);
    expect(asked.status).toBe(0);
    expect(asked.stdout).toMatch(new RegExp(`^Usage: portcullis ${command}\\b`, 'm'));
    expect(asked.stdout).toMatch(new RegExp(`^Examples:\\n  \\$ portcullis (${command} )?`, 'm'));
    expect(portcullis([command, '--help']).stdout).toBe(asked.stdout);
  });

  it('answers `import` without a file with a usage error naming the missing file, not an unknown command', () => {
    const run = portcullis(['import']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("missing required argument 'file'");
    expect(run.stderr).toContain('portcullis help import');
    expect(run.stderr).not.toContain('unknown command');
  });

  it('answers a command without its --config, an unknown command and a stray argument with usage errors, exit 2', () => {
    const check = portcullis(['check']);
    expect([check.status, check.stderr]).toEqual([2, expect.stringContaining("required option '-c, --config <file>' not specified")]);
    const unknown = portcullis(['chek', '--config', 'gateway.json']);
    expect([unknown.status, unknown.stderr]).toEqual([2, expect.stringContaining("unknown command 'chek'")]);
    const stray = portcullis(['schema', 'extra']);
    expect([stray.status, stray.stderr]).toEqual([2, expect.stringContaining("too many arguments for 'schema'")]);
  });
});
