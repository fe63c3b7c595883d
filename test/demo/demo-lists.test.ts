/**
 * The demo as a new user meets it (`node dist/demo/start-demo.js`, what `npm start` runs): notes
 * added through one protocol era are seen, and announced, in the other. The notes server keeps
 * its note book in its process, so this holds only because both eras reach the same connection,
 * and the lists the gateway caches are dropped when the server announces a change.
 */
import { spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  Cleanup,
  collectNotifications,
  connectClient,
  descendantsOf,
  isAlive,
  killPids,
  ROOT,
  textOf,
  waitUntil,
} from '../integration/harness.js';

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
  cleanup.add(() => killPids([child.pid!, ...descendantsOf(child.pid!).map((p) => p.pid)].filter((pid) => isAlive(pid))));
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.resume();
  return waitUntil(() => READY.exec(stdout)?.[1] ?? (child.exitCode !== null && Promise.reject(new Error('exited before Ready'))), 'the Ready line', 60_000);
}

async function addNote(client: Client, title: string): Promise<void> {
  const result = await client.callTool({ name: 'notes__add_note', arguments: { title, body: `${title} body` } });
  expect(textOf(result)).toMatch(/^Added note #\d+$/);
}

// The upstreams' resources: the gateway's own (portcullis://customizations, docs/customizations.md) aside.
const uris = async (client: Client) => (await client.listResources()).resources.map((r) => r.uri).filter((uri) => uri !== 'portcullis://customizations').sort();

describe('the demo, across protocol eras', () => {
  it('shows a 2026-era client the notes it added, and a 2025-era session the same, with list_changed', async () => {
    const url = await startDemo();
    const modern = (await connectClient(cleanup, url, '2026')).client;
    // The demo plugin's agent makes the gateway list its agents resource beside the notes.
    expect(await uris(modern)).toEqual(['notes://all', 'portcullis://agents']);
    for (const title of ['one', 'two', 'three', 'four']) await addNote(modern, title);
    const afterFour = await uris(modern);
    expect(afterFour).toHaveLength(6);
    expect(afterFour).toContain('notes://note/4');

    const legacy = (await connectClient(cleanup, url, '2025')).client;
    const changes = collectNotifications(legacy, 'notifications/resources/list_changed');
    expect(await uris(legacy)).toEqual(afterFour);
    await addNote(legacy, 'five');
    await changes.waitFor(1);
    expect(await uris(legacy)).toHaveLength(7);
    expect(await uris(modern)).toHaveLength(7);
  }, 90_000);

  it('answers a 2026-era list with an honest cache hint: private, and no lifetime the upstream did not give', async () => {
    const url = await startDemo();
    const modern = (await connectClient(cleanup, url, '2026')).client;
    const result = (await modern.listResources()) as Record<string, unknown>;
    expect(result.cacheScope).toBe('private');
    expect(result.ttlMs).toBe(0);
  }, 90_000);
});
