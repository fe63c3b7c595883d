/**
 * A log sink that fails never keeps the process alive: `npm start 2>&1 | tee log`, then Ctrl-C,
 * kills tee first, and the gateway's last log lines then meet a pipe without a reader (EPIPE).
 * The `portcullis` executable with its stdout and stderr pipes closed by the reader still exits
 * on SIGINT and on SIGTERM; the sink itself drops lines once its descriptor fails and its
 * synchronous flush returns. Every wait is a hang guard.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Cleanup, CLI_JS, ROOT, waitForExit, waitUntil } from '../integration/harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let config: string;

beforeAll(() => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-broken-stderr-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, servers: {} }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

describe('a gateway whose stdout and stderr readers went away', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`exits on ${signal}`, async () => {
      const child = spawn(process.execPath, [CLI_JS, '--config', config], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, PORTCULLIS_LOG_LEVEL: 'debug' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      perTest.add(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.resume();
      await waitUntil(() => stdout.includes('[portcullis]:Ready.'), 'the Ready line', 20_000);
      // The reader goes away (as tee does on Ctrl-C), then the signal arrives.
      child.stdout.destroy();
      child.stderr.destroy();
      child.kill(signal);
      const exit = await waitForExit(child, 20_000);
      expect(exit.signal).toBeNull();
      expect(exit.code).toBe(0);
    });
  }
});

describe('the stderr log sink', () => {
  it('drops lines once its descriptor fails, and its synchronous flush returns', async () => {
    const sink = pathToFileURL(`${ROOT}dist/src/observability/log-sink.js`).href;
    // A child whose stderr reader is gone: every write to fd 2 fails with EPIPE.
    const script = `
      const { createFdSink } = await import(${JSON.stringify(sink)});
      const sink = createFdSink({ fd: 2, minBytes: 1 << 20, flushIntervalMs: 60_000, maxPendingBytes: 1 << 20 });
      process.stdin.once('data', () => {
        for (let i = 0; i < 100; i++) sink.write('{"msg":"after the reader left"}\\n');
        sink.flushSync();
        sink.write('{"msg":"dropped"}\\n');
        sink.flushSync();
        process.stdout.write(sink.broken ? 'broken' : 'not broken');
        process.exit(0);
      });
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
    perTest.add(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.destroy();
    child.stdin.write('go\n');
    const exit = await waitForExit(child, 20_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(stdout).toBe('broken');
  });
});
