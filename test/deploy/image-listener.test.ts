/**
 * The image's listener and health check without Docker: the Dockerfile names the listener through
 * PORTCULLIS_HOST / PORTCULLIS_PORT (which take the place of the config's listen block, as
 * --host / --port do), binds every interface of the container so a published port reaches it, and
 * its HEALTHCHECK command follows PORTCULLIS_PORT. The command itself is run here, with node,
 * against a real gateway on loopback (tests never bind beyond loopback).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Cleanup, READY_LINE, spawnCli } from '../integration/harness.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const runtime = readFileSync(join(root, 'Dockerfile'), 'utf8').split(/^FROM\s/m).at(-1)!;

/** The exec-form command of the runtime stage's HEALTHCHECK. */
function healthcheckCommand(): string[] {
  const match = /^HEALTHCHECK[^\n]*\\\n\s*CMD (\[.*\])$/m.exec(runtime);
  expect(match, 'HEALTHCHECK … CMD [exec form]').not.toBeNull();
  return JSON.parse(match![1]!) as string[];
}

/** Runs the health check as Docker would, with the image's environment but PORTCULLIS_PORT = `port`. */
function runHealthcheck(port: string) {
  const [program, ...args] = healthcheckCommand();
  expect(program).toBe('node');
  return spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 15_000, env: { PATH: process.env.PATH, PORTCULLIS_PORT: port } });
}

const perFile = new Cleanup();
const perTest = new Cleanup();
let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-image-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

describe('the image listener', () => {
  it('sets the listener by environment, on every interface of the container, at 8787 unless told otherwise', () => {
    expect(runtime).toMatch(/^ENV .*\bPORTCULLIS_HOST=0\.0\.0\.0\b/m);
    expect(runtime).toMatch(/^ENV .*\bPORTCULLIS_PORT=8787\b/m);
    expect(runtime).toMatch(/^EXPOSE 8787$/m);
  });

  it('has a health check that reads PORTCULLIS_PORT rather than a fixed port', () => {
    const command = healthcheckCommand().join(' ');
    expect(command).toContain('process.env.PORTCULLIS_PORT');
    expect(command).not.toMatch(/\b8787\b/);
  });

  it('listens where PORTCULLIS_HOST and PORTCULLIS_PORT say, over the config, and the health check passes there and fails elsewhere', async () => {
    const config = join(dir, 'gateway.json');
    // A listen block that would fail (a privileged port): the environment takes its place.
    writeFileSync(config, JSON.stringify({ listen: { host: '127.0.0.1', port: 1 }, servers: {} }));
    const gateway = spawnCli(perTest, ['--config', config], { PORTCULLIS_HOST: '127.0.0.1', PORTCULLIS_PORT: '0' });
    const url = new URL(await gateway.waitForLine(READY_LINE));
    expect(url.port).not.toBe('1');
    const healthy = runHealthcheck(url.port);
    expect([healthy.status, healthy.stderr]).toEqual([0, '']);
    gateway.child.kill('SIGTERM');
    expect((await gateway.exited()).code).toBe(0);
    expect(runHealthcheck(url.port).status).toBe(1);
  });
});
