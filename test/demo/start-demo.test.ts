/**
 * `npm start` as Docker, systemd and CI run it, and as a terminal ends it: the process tree it
 * starts (npm, the demo, the clock server, the gateway's stdio child) is gone after SIGTERM to the
 * top process, and the demo takes its children down on SIGINT and SIGHUP too. The demo's clock
 * also stops when the demo is killed outright. Real processes, found through /proc; every wait
 * is a hang guard, none a speed assertion.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Cleanup, descendantsOf, isAlive, killPids, ROOT, waitForExit, waitUntil, type ProcessInfo } from '../integration/harness.js';

const cleanup = new Cleanup();
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());

const READY = /^\[portcullis\]:Ready\. http:\/\/127\.0\.0\.1:\d+\/mcp$/m;

/** Spawns `argv` in the repo with PORT=0; resolves once the Ready line is out, with every descendant then. */
async function startDemo(argv: readonly string[]): Promise<{ child: ChildProcess; tree: ProcessInfo[] }> {
  const [command, ...args] = argv;
  const child = spawn(command!, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tree: ProcessInfo[] = [];
  cleanup.add(() => killPids([child.pid!, ...tree.map((p) => p.pid)].filter((pid) => isAlive(pid))));
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.resume();
  await waitUntil(() => READY.test(stdout) || (child.exitCode !== null && Promise.reject(new Error('exited before Ready'))), 'the Ready line', 60_000);
  // The gateway reports Ready once its required servers are up: clock and notes are running.
  tree = await waitUntil(() => {
    const found = descendantsOf(child.pid!);
    return found.some((p) => p.cmdline.some((a) => a.endsWith('clock-http.js'))) && found.some((p) => p.cmdline.some((a) => a.endsWith('notes-stdio.js'))) && found;
  }, 'the demo servers');
  return { child, tree };
}

async function expectAllGone(child: ChildProcess, tree: readonly ProcessInfo[]): Promise<void> {
  await waitForExit(child, 20_000);
  await waitUntil(() => tree.every((p) => !isAlive(p.pid)), 'every process of the tree to exit', 20_000);
}

describe('npm start', () => {
  it('leaves no process behind after SIGTERM to npm', async () => {
    const { child, tree } = await startDemo(['npm', 'start', '--ignore-scripts', '--silent']);
    expect(tree.length).toBeGreaterThanOrEqual(3);
    child.kill('SIGTERM');
    await expectAllGone(child, tree);
  }, 120_000);
});

describe('the demo', () => {
  for (const signal of ['SIGINT', 'SIGHUP'] as const) {
    it(`stops the clock and the gateway's children on ${signal}`, async () => {
      const { child, tree } = await startDemo([process.execPath, 'dist/demo/start-demo.js']);
      child.kill(signal);
      await expectAllGone(child, tree);
    }, 120_000);
  }

  it('leaves no clock server behind when it is killed outright', async () => {
    const { child, tree } = await startDemo([process.execPath, 'dist/demo/start-demo.js']);
    const clock = tree.filter((p) => p.cmdline.some((a) => a.endsWith('clock-http.js')));
    expect(clock).toHaveLength(1);
    child.kill('SIGKILL');
    await waitForExit(child);
    await waitUntil(() => !isAlive(clock[0]!.pid), 'the clock to exit after its parent died', 20_000);
  }, 120_000);
});
