/**
 * Log lines are written to stderr in batches; none is lost when the process ends. Real processes:
 * the `portcullis` executable stopped by SIGTERM, and a process that dies of an uncaught error.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Cleanup, ROOT, spawnCli, waitUntil } from '../integration/harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let config: string;

beforeAll(() => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-log-flush-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, servers: {} }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

/** The `msg` of every JSON log line in `stderr`, in order. */
function messages(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
}

/** Runs `body` (ES module code, `createLogger` in scope) in a new `node`; resolves with its stderr. */
function runWithLogger(body: string): Promise<{ code: number | null; stderr: string }> {
  const logger = pathToFileURL(`${ROOT}dist/src/observability/logger.js`).href;
  const script = `import { createLogger } from ${JSON.stringify(logger)};\n${body}`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 15_000, env: { PATH: process.env.PATH } }, (error, _stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr }),
    );
  });
}

describe('log lines at the end of a process', () => {
  it('reach stderr when the gateway shuts down on SIGTERM, up to the last one', async () => {
    const cli = spawnCli(perTest, ['--config', config], { PORTCULLIS_LOG_LEVEL: 'info' });
    await cli.waitForLine(/^\[portcullis\]:Ready\. (.*)$/);
    cli.child.kill('SIGTERM');
    expect(await cli.exited()).toEqual({ code: 0, signal: null });
    const logged = messages(cli.stderr());
    expect(logged).toContain('shutting down');
    // Logged after everything closed, microseconds before the process exits.
    expect(logged.at(-1)).toBe('stopped');
  });

  it('reach stderr when the process dies of an uncaught error', async () => {
    const { code, stderr } = await runWithLogger(`
      const logger = createLogger({ level: 'info' });
      for (let i = 0; i < 3; i++) logger.info({ i }, 'before the crash');
      throw new Error('crash');
    `);
    expect(code).toBe(1);
    expect(messages(stderr)).toEqual(['before the crash', 'before the crash', 'before the crash']);
  });

  it('reach stderr on process.exit()', async () => {
    const { code, stderr } = await runWithLogger(`
      const logger = createLogger({ level: 'info' });
      logger.warn('exiting');
      process.exit(3);
    `);
    expect(code).toBe(3);
    expect(messages(stderr)).toEqual(['exiting']);
  });
});

describe('log lines of a quiet process', () => {
  it('reach stderr while it runs, without waiting for a batch to fill', async () => {
    const logger = pathToFileURL(`${ROOT}dist/src/observability/logger.js`).href;
    const script = `import { createLogger } from ${JSON.stringify(logger)};
      createLogger({ level: 'info' }).info('one quiet line');
      setInterval(() => {}, 1_000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH } });
    perTest.add(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await waitUntil(() => stderr.includes('"msg":"one quiet line"'), 'the quiet line on stderr', 10_000);
    expect(child.exitCode).toBeNull();
  });
});
