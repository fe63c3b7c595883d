/**
 * Writing to a stdio child: messages written in the same turn of the event loop leave together
 * (stdin corked until its check phase) and still arrive whole and in order, and a write into a full pipe resolves only
 * once the child has read enough of it. A real child process over real pipes.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/observability/logger.js';
import { buildChildEnv } from '../../src/upstream/child-env.js';
import { StdioProcess } from '../../src/upstream/stdio-process.js';
import { waitUntil } from '../integration/harness.js';

const children = path.join(path.dirname(fileURLToPath(import.meta.url)), 'children');
const running: Array<{ proc: StdioProcess; finished: Promise<void> }> = [];

afterEach(async () => {
  for (const { proc, finished } of running.splice(0)) {
    if (proc.terminate()) await finished;
  }
});

/**
 * Starts `gated-reader.mjs` expecting `bytes` bytes; its stdout is collected as text, and
 * "reading" is pushed to `events` the moment the child says it started reading.
 */
async function gatedReader(bytes: number, events: string[] = []) {
  let stdout = '';
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const proc = new StdioProcess(
    {
      serverName: 'gated',
      command: process.execPath,
      args: [path.join(children, 'gated-reader.mjs'), `--expect=${bytes}`],
      env: buildChildEnv(process.env, {}),
      killGraceMs: 1_000,
      log: silentLogger(),
      redact: (text) => text,
    },
    {
      onStdout: (chunk) => {
        const seen = stdout.includes('reading\n');
        stdout += chunk.toString('utf8');
        if (!seen && stdout.includes('reading\n')) events.push('reading');
      },
      onError: () => undefined,
      onExit: () => undefined,
      onFinish: () => finish(),
    },
  );
  running.push({ proc, finished });
  await proc.start();
  await waitUntil(() => stdout.includes('ready\n'), 'the child to be ready');
  return { proc, stdout: () => stdout };
}

describe('StdioProcess.write', () => {
  it('delivers many messages written at once whole and in order, resolving only once a full pipe drained', async () => {
    // 4 MiB: far more than a pipe and the stream's buffer hold while the child reads nothing.
    const messages = Array.from({ length: 64 }, (_, i) => Buffer.from(`${JSON.stringify({ i, pad: String(i % 10).repeat(64 * 1024) })}\n`));
    const all = Buffer.concat(messages);
    const order: string[] = [];
    const { proc, stdout } = await gatedReader(all.length, order);
    const written = Promise.all(messages.map((message) => proc.write(message))).then(() => void order.push('written'));
    // Let the writes run into the full pipe before the child starts to read.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    process.kill(proc.pid!, 'SIGUSR2');
    await written;
    const done = await waitUntil(() => /done (\d+) ([0-9a-f]{64})/.exec(stdout()) ?? undefined, 'the child to read everything');
    expect(order).toEqual(['reading', 'written']);
    expect(Number(done[1])).toBe(all.length);
    expect(done[2]).toBe(createHash('sha256').update(all).digest('hex'));
  });

  it('delivers small messages written at once without waiting', async () => {
    const messages = Array.from({ length: 100 }, (_, i) => Buffer.from(`{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`));
    const all = Buffer.concat(messages);
    const { proc, stdout } = await gatedReader(all.length);
    // Everything fits the stream's buffer: every write resolves before the child reads a byte.
    await Promise.all(messages.map((message) => proc.write(message)));
    process.kill(proc.pid!, 'SIGUSR2');
    const done = await waitUntil(() => /done (\d+) ([0-9a-f]{64})/.exec(stdout()) ?? undefined, 'the child to read everything');
    expect(done[2]).toBe(createHash('sha256').update(all).digest('hex'));
  });
});
