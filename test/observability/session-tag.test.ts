/**
 * Session ids never reach a log line; a short keyed tag of them does, so lines still correlate.
 * The whole life of a 2025-era session against the `portcullis` executable at trace level (open,
 * list, call, an unknown id, close), every stderr line captured, the raw id known to the test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sessionTag } from '../../src/observability/session-tag.js';
import {
  assertBuilt,
  Cleanup,
  killPids,
  MCP_POST_HEADERS,
  newMarker,
  openRawSession,
  processesWithMarker,
  rawRequest,
  spawnCli,
  stdioServer,
} from '../integration/harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-session-tag-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const READY = /^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;

describe('sessionTag', () => {
  it('is 12 hex characters, the same for the same id within the process, different across ids', () => {
    const id = 'b7c1d0e2-6f4a-4d43-9b1e-2a3c4d5e6f70';
    expect(sessionTag(id)).toMatch(/^[0-9a-f]{12}$/);
    expect(sessionTag(id)).toBe(sessionTag(id));
    expect(sessionTag(id)).not.toBe(sessionTag(`${id.slice(0, -1)}1`));
    expect(sessionTag(undefined)).toBeUndefined();
  });

  it('gives the same tag for remembered ids, for ids too long to remember, and after the memory is emptied', () => {
    const long = 'x'.repeat(500);
    expect(sessionTag(long)).toBe(sessionTag(long));
    const first = sessionTag('session-0');
    // More ids than are remembered: the memory is emptied on the way and the tag recomputed.
    for (let i = 1; i <= 5000; i++) sessionTag(`session-${i}`);
    expect(sessionTag('session-0')).toBe(first);
  });
});

describe('log lines of a session', () => {
  it('never carry its id, at any level, and correlate by its tag from open to close', async () => {
    const marker = newMarker();
    perTest.add(() => killPids(processesWithMarker(marker)));
    const config = join(dir, 'gateway.json');
    writeFileSync(config, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, servers: { fx: stdioServer(marker) } }));
    const cli = spawnCli(perTest, ['--config', config], { PORTCULLIS_LOG_LEVEL: 'trace' });
    const url = await cli.waitForLine(READY);

    const session = await openRawSession(url);
    expect((await session.post({ id: 2, method: 'tools/list' })).status).toBe(200);
    expect((await session.post({ id: 3, method: 'tools/call', params: { name: 'fx__test_simple_text', arguments: {} } })).status).toBe(200);
    const unknownId = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    const unknown = await rawRequest(url, {
      headers: { ...MCP_POST_HEADERS, 'mcp-session-id': unknownId, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }),
    });
    expect(unknown.status).toBe(404);
    expect((await session.delete()).status).toBe(200);
    cli.child.kill('SIGTERM');
    expect(await cli.exited()).toEqual({ code: 0, signal: null });

    const stderr = cli.stderr();
    for (const id of [session.id, unknownId]) {
      expect(stderr).not.toContain(id);
      expect(stderr).not.toContain(id.replace(/-/g, ''));
    }
    const lines = stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const tags = (msg: string) => lines.filter((line) => line.msg === msg).map((line) => line.session);
    const opened = tags('session opened');
    expect(opened).toHaveLength(1);
    const [own] = opened as string[];
    expect(own).toMatch(/^[0-9a-f]{12}$/);
    // Every line of this session carries the one tag: the rpc lines, the access log, the close.
    const rpc = lines.filter((line) => line.msg === 'rpc' && line.session !== undefined);
    expect(rpc.map((line) => line.rpc)).toEqual(expect.arrayContaining(['tools/list', 'tools/call']));
    for (const line of rpc) expect(line.session).toBe(own);
    expect(tags('session closed')).toEqual([own]);
    const http = lines.filter((line) => line.msg === 'http' && line.session !== undefined);
    expect(http.length).toBeGreaterThanOrEqual(4);
    const httpTags = new Set(http.map((line) => line.session));
    expect(httpTags.has(own)).toBe(true);
    for (const value of httpTags) expect(value).toMatch(/^[0-9a-f]{12}$/);
    // The unknown id is tagged too (another tag, never the id).
    expect(httpTags.size).toBe(2);
  });
});
