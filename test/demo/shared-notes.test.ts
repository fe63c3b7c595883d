/**
 * The demo as a newcomer runs it: a note added by one client run is there for the next one. The
 * demo's notes server is one child shared by every session (`isolation: "shared"`), so two client
 * runs (here one of each protocol era, each its own session, the first ended before the second
 * starts) read the same note book. Real `node dist/demo/start-demo.js`, real SDK clients.
 */
import { spawn } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Cleanup, connectClient, descendantsOf, isAlive, killPids, newMarker, ROOT, textOf, waitUntil } from '../integration/harness.js';

const cleanup = new Cleanup();
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());

const READY = /^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m;

async function startDemo(): Promise<string> {
  const child = spawn(process.execPath, ['dist/demo/start-demo.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.resume();
  cleanup.add(() => killPids([child.pid!, ...descendantsOf(child.pid!).map((p) => p.pid)].filter((pid) => isAlive(pid))));
  await waitUntil(() => READY.test(stdout) || (child.exitCode !== null && Promise.reject(new Error('exited before Ready'))), 'the Ready line', 60_000);
  return READY.exec(stdout)![1]!;
}

describe('the demo notes server', () => {
  it('keeps a note added in one client session for the next session', async () => {
    const url = await startDemo();
    const title = `groceries ${newMarker()}`;

    const first = new Cleanup();
    const writer = await connectClient(first, url, '2025');
    expect(textOf(await writer.client.callTool({ name: 'notes__add_note', arguments: { title, body: 'oat milk' } }))).toMatch(/^Added note #\d+$/);
    await first.run(); // the first run ends its session

    const reader = await connectClient(cleanup, url, '2026');
    const found = textOf(await reader.client.callTool({ name: 'notes__search_notes', arguments: { query: title } }));
    expect(found).not.toMatch(/^No note matches/);
    expect(found).toContain(title);
    expect(found).toContain('oat milk');
  });
});
