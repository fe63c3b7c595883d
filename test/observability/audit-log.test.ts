/**
 * The audit log of a real gateway (docs/operations.md, "Audit log"): SDK clients of both eras
 * call, get and read through the aggregate and a side channel, with authentication on; every
 * line is checked field by field against the documented contract, and neither the arguments
 * (holding a secret), the results, the bearer token nor the session id ever appears. Edge
 * refusals (authentication, the initialize rate) get lines too. The file sink rotates by size and
 * is written out on every exit path of a real process: SIGTERM to the CLI, `process.exit`, and
 * an uncaught exception.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/observability/audit-log.js';
import { fileAuditSink } from '../../src/observability/audit-sink.js';
import { silentLogger } from '../../src/observability/logger.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  connectClient,
  errorOf,
  MCP_POST_HEADERS,
  newMarker,
  rawRequest,
  ROOT,
  sideChannelUrl,
  spawnCli,
  startGatewayFor,
  startTestGateway,
  stdioServer,
  textOf,
} from '../integration/harness.js';

const FIELDS = [
  'type', 'time', 'method', 'principal', 'session', 'endpoint', 'server', 'tool', 'prompt', 'uri',
  'decision', 'rule', 'durationMs', 'outcome', 'errorCode', 'reason', 'status', 'id',
];
const SECRET = `sk-live-${process.pid}-do-not-log`;

const cleanup = new Cleanup();
let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-audit-'));
});
afterEach(() => cleanup.run());
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  killAllStdioChildren();
});

type Line = Record<string, unknown>;
const linesOf = (text: string): Line[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);

describe('audit lines of a real gateway', () => {
  it('records each call, get and read with the contract fields, and never arguments, results, tokens or session ids', async () => {
    const file = join(dir, `calls-${newMarker()}.jsonl`);
    const policy = join(dir, 'deny-crash.json');
    writeFileSync(policy, JSON.stringify({ deniedTools: ['a__crash'] }));
    const principals = bearerPrincipals('alice', 'bob');
    const gateway = await startGatewayFor(cleanup, principals, { a: stdioServer(newMarker(), { disabledTools: ['slow'] }) }, {
      audit: { sink: file },
      policy,
    });
    const legacy = await connectClient(cleanup, gateway.url, '2025', { headers: principals.headers('alice') });
    const echoed = await legacy.client.callTool({ name: 'a__echo', arguments: { text: SECRET } });
    expect(textOf(echoed)).toBe(SECRET);
    await legacy.client.getPrompt({ name: 'a__test_simple_prompt' });
    await legacy.client.readResource({ uri: 'test://static-text' });
    expect((await errorOf(legacy.client.callTool({ name: 'a__slow', arguments: { ms: 1 } }))).message).toContain('Unknown tool');
    expect((await errorOf(legacy.client.callTool({ name: 'a__crash', arguments: {} }))).message).toContain('Unknown tool');
    expect((await errorOf(legacy.client.callTool({ name: 'a__missing', arguments: {} }))).message).toContain('Unknown tool');
    await legacy.client.listTools(); // not audited: neither a call, get or read nor a refusal
    const modern = await connectClient(cleanup, gateway.url, '2026', { headers: principals.headers('alice') });
    await modern.client.callTool({ name: 'a__echo', arguments: { text: SECRET } });
    const side = await connectClient(cleanup, sideChannelUrl(gateway.url, 'a'), '2025', { headers: principals.headers('bob') });
    await side.client.callTool({ name: 'echo', arguments: { text: SECRET } });
    const anonymous = await rawRequest(gateway.url, { method: 'POST', headers: MCP_POST_HEADERS, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(anonymous.status).toBe(401);
    const sessionIds = [legacy.transport.sessionId, side.transport.sessionId];
    await gateway.close();

    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(SECRET);
    for (const who of ['alice', 'bob']) expect(text).not.toContain(principals.headers(who).Authorization!.slice('Bearer '.length));
    for (const id of sessionIds) expect(text).not.toContain(id!);
    const lines = linesOf(text);
    for (const line of lines) expect(Object.keys(line)).toEqual(FIELDS);
    expect(lines).toHaveLength(9);
    const byTool = (tool: string, endpoint = 'aggregate') => lines.filter((l) => l.tool === tool && l.endpoint === endpoint);

    const [legacyEcho, modernEcho] = byTool('a__echo');
    expect(legacyEcho).toMatchObject({
      type: 'audit', method: 'tools/call', principal: 'alice', endpoint: 'aggregate', server: 'a', prompt: null, uri: null,
      decision: 'allowed', outcome: 'ok', errorCode: null, reason: null, status: null,
    });
    expect(legacyEcho!.session).toMatch(/^[0-9a-f]{12}$/);
    expect(typeof legacyEcho!.id).toBe('number');
    expect(typeof legacyEcho!.durationMs).toBe('number');
    expect(Number.isNaN(Date.parse(String(legacyEcho!.time)))).toBe(false);
    expect(modernEcho).toMatchObject({ principal: 'alice', session: null, server: 'a', decision: 'allowed', outcome: 'ok' });
    // Each line names its own caller: bob's side-channel call is bob's, alice's are alice's.
    expect(byTool('echo', 'server:a')[0]).toMatchObject({ principal: 'bob', server: 'a', decision: 'allowed', outcome: 'ok' });
    expect(lines.filter((l) => l.principal === 'bob')).toHaveLength(1);
    expect(byTool('echo', 'server:a')[0]!.session).not.toBe(legacyEcho!.session);
    expect(lines.find((l) => l.method === 'prompts/get')).toMatchObject({ prompt: 'a__test_simple_prompt', tool: null, server: 'a', decision: 'allowed' });
    expect(lines.find((l) => l.method === 'resources/read')).toMatchObject({ uri: 'test://static-text', server: 'a', decision: 'allowed', outcome: 'ok' });
    expect(byTool('a__slow')[0]).toMatchObject({ decision: 'filtered', server: 'a', outcome: 'error', errorCode: -32602, reason: 'UNKNOWN_TOOL' });
    expect(byTool('a__crash')[0]).toMatchObject({ decision: 'denied', server: 'a', outcome: 'error', reason: 'UNKNOWN_TOOL' });
    expect(byTool('a__missing')[0]).toMatchObject({ decision: 'allowed', server: null, outcome: 'error', reason: 'UNKNOWN_TOOL' });
    expect(lines.find((l) => l.reason === 'UNAUTHENTICATED')).toMatchObject({
      method: null, principal: null, endpoint: 'aggregate', decision: 'denied', outcome: 'error', status: 401, id: null,
    });
  });

  it('records a refusal by the initialize rate as rate-limited', async () => {
    const file = join(dir, `rate-${newMarker()}.jsonl`);
    const gateway = await startTestGateway(cleanup, { a: stdioServer(newMarker()) }, { audit: { sink: file }, sessions: { initializePerMinute: 1 } });
    await connectClient(cleanup, gateway.url, '2025');
    await expect(connectClient(cleanup, gateway.url, '2025')).rejects.toThrow();
    await gateway.close();
    const refused = linesOf(readFileSync(file, 'utf8')).filter((l) => l.reason === 'RATE_LIMITED');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ decision: 'rate-limited', status: 429, errorCode: -32600, endpoint: 'aggregate', principal: null });
  });
});

describe('the audit file', () => {
  it('rotates by size, never splitting a line, keeping maxFiles old files', () => {
    const base = join(dir, `rotate-${newMarker()}`);
    const file = `${base}.jsonl`;
    const audit = new AuditLog(fileAuditSink({ path: file, maxBytes: 4_096, maxFiles: 2, logger: silentLogger() }));
    for (let index = 0; index < 200; index++) {
      audit.record({ started: Date.now(), method: 'tools/call', endpoint: 'aggregate', tool: `tool_${index}`, decision: 'allowed', durationMs: 1, id: index });
      if (index % 10 === 9) audit.flush();
    }
    audit.close();
    const names = readdirSync(dir).filter((name) => name.startsWith(`rotate-`) && name.includes(base.split('/').pop()!)).sort();
    expect(names).toEqual([`${base.split('/').pop()}.jsonl`, `${base.split('/').pop()}.jsonl.1`, `${base.split('/').pop()}.jsonl.2`]);
    const ids: number[] = [];
    for (const suffix of ['.2', '.1', '']) {
      const path = `${file}${suffix}`;
      expect(statSync(path).size).toBeLessThanOrEqual(4_096);
      for (const line of linesOf(readFileSync(path, 'utf8'))) ids.push(line.id as number);
    }
    // The newest lines survive, in order, with nothing split or lost between the kept files.
    expect(ids.at(-1)).toBe(199);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => 200 - ids.length + i));
  });

  it.each([
    ['exit', 0],
    ['throw', 1],
  ])('is written out when the process leaves by %s in the same tick', (mode, code) => {
    const file = join(dir, `exit-${mode}-${newMarker()}.jsonl`);
    const result = spawnSync(process.execPath, [`${ROOT}dist/test/fixtures/audit-exit.js`, file, String(mode), '25'], { encoding: 'utf8', timeout: 20_000 });
    expect(result.status).toBe(code);
    const lines = linesOf(readFileSync(file, 'utf8'));
    expect(lines.map((l) => l.tool)).toEqual(Array.from({ length: 25 }, (_, i) => `t${i}`));
  });

  it('holds the call of a CLI gateway stopped by SIGTERM', async () => {
    const file = join(dir, `cli-${newMarker()}.jsonl`);
    const configFile = join(dir, `cli-${newMarker()}.json`);
    writeFileSync(configFile, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, audit: { sink: file }, servers: { a: stdioServer(newMarker()) } }));
    const cli = spawnCli(cleanup, ['--config', configFile]);
    const url = await cli.waitForLine(/Ready\. (\S+)/);
    const { client } = await connectClient(cleanup, url, '2025');
    await client.callTool({ name: 'a__echo', arguments: { text: SECRET } });
    cli.child.kill('SIGTERM');
    expect((await cli.exited()).code).toBe(0);
    const lines = linesOf(readFileSync(file, 'utf8'));
    expect(lines.filter((l) => l.tool === 'a__echo')).toHaveLength(1);
    expect(readFileSync(file, 'utf8')).not.toContain(SECRET);
  });
});
