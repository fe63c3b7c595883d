/**
 * `GET <path>/admin/status` through a real gateway with bearer authentication and real stdio
 * upstreams: what each server shows is counted as the asking admin is shown it — after the
 * server's tool filter, the policy's access rules for that admin and deferral — so two admins
 * with different rules read different counts; each server's requests are the gateway's own
 * measurements; what an upstream says of itself is cut short; `auditAfter` is checked; and a page
 * refreshing against a server that is down neither retries it nor logs it left out on every
 * refresh.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import type { AdminStatus } from '../../src/admin/admin-status.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  connectClient,
  gatewayConfig,
  killPids,
  newMarker,
  processesWithMarker,
  rawRequest,
  startGatewayFor,
  stdioServer,
  textOf,
  waitUntil,
  within,
} from '../integration/harness.js';

const cleanup = new Cleanup();
const principals = bearerPrincipals('ops', 'root');
const markers = { local: newMarker(), other: newMarker() };
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-admin-status-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.add(() => killPids([...processesWithMarker(markers.local), ...processesWithMarker(markers.other)]));
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ admins: ['ops', 'root'], access: { default: 'allow', rules: [{ principals: ['ops'], effect: 'deny', tools: ['local__echo'] }] } }));
  gateway = await startGatewayFor(
    cleanup,
    principals,
    {
      local: stdioServer(markers.local, { isolation: 'shared', disabledTools: ['slow'] }),
      other: stdioServer(markers.other, { isolation: 'shared', defer: true, env: { FIXTURE_SERVER_TITLE: 'T'.repeat(10_000) } }),
    },
    { policy: join(dir, 'policy.json') },
  );
}, 60_000);
afterAll(() => cleanup.run());

async function statusAs(principal: string, query = ''): Promise<AdminStatus> {
  const answer = await rawRequest(`${gateway.url}/admin/status${query}`, { method: 'GET', headers: principals.headers(principal) });
  expect(answer.status).toBe(200);
  return answer.json() as AdminStatus;
}

const server = (status: AdminStatus, name: string) => status.servers.find((s) => s.name === name)!;

describe('the admin status', () => {
  it('counts what the asking admin is shown: filters, its own access rules and deferral', async () => {
    const ops = await statusAs('ops');
    const root = await statusAs('root');
    expect(ops.view).toEqual({ principal: 'ops', counted: true });
    expect(root.view).toEqual({ principal: 'root', counted: true });
    const upstream = server(ops, 'local').upstreamTools!;
    expect(upstream).toBeGreaterThan(5);
    // `slow` is filtered for everyone; `local__echo` is denied to ops alone.
    expect(server(root, 'local').shown).toMatchObject({ tools: upstream - 1, deferredTools: 0 });
    expect(server(ops, 'local').shown).toMatchObject({ tools: upstream - 2, deferredTools: 0 });
    // `other` is deferred: none of its tools are listed, all reachable through search_tools.
    expect(server(ops, 'other').shown).toMatchObject({ tools: 0, deferredTools: server(ops, 'other').upstreamTools });
    expect(server(ops, 'local').shown).toMatchObject({ prompts: 5, resources: 3, resourceTemplates: 1 });
    expect(server(ops, 'local').children).toBe(1);
    expect(ops.gateway).toMatchObject({ mcpUrl: gateway.publicUrl, metricsPath: '/metrics' });
    expect(server(ops, 'local').sideChannel).toBe(`${gateway.publicUrl}/servers/local`);
  });

  it('cuts what an upstream says of itself to 200 characters', async () => {
    const title = server(await statusAs('root'), 'other').upstream?.title;
    expect(title).toHaveLength(200);
    expect(title?.endsWith('…')).toBe(true);
  });

  it('counts each server’s requests and errors as the gateway measured them', async () => {
    const before = server(await statusAs('root'), 'local').activity;
    const { client } = await connectClient(cleanup, gateway.url, '2026', { headers: principals.headers('root') });
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'hi' } }))).toBe('hi');
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'again' } }))).toBe('again');
    const side = await connectClient(cleanup, `${gateway.url}/servers/local`, '2026', { headers: principals.headers('root') });
    await expect(side.client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow();
    const after = server(await statusAs('root'), 'local').activity;
    expect(after.errors - before.errors).toBe(1);
    expect(after.requests - before.requests).toBeGreaterThanOrEqual(3);
    expect(after.p50Ms).toBeGreaterThan(0);
    expect(after.p95Ms).toBeGreaterThanOrEqual(after.p50Ms!);
    expect(after.minutes.at(-1)!.requests).toBeGreaterThanOrEqual(3);
  });

  it('refuses an auditAfter that is not a whole number', async () => {
    for (const bad of ['abc', '-1', '1.5', '9'.repeat(20)]) {
      const answer = await rawRequest(`${gateway.url}/admin/status?auditAfter=${bad}`, { method: 'GET', headers: principals.headers('root') });
      expect(answer.status).toBe(400);
      expect(answer.json().error.message).toContain('auditAfter');
    }
  });

  it('does not make a down server be retried, or logged as left out, on every refresh of an open page', { timeout: 60_000 }, async () => {
    const lines: Array<{ msg?: string; server?: string }> = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } as never });
    const marker = newMarker();
    cleanup.add(() => killPids(processesWithMarker(marker)));
    const broken = { transport: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'], mode: 'optional' };
    const local = await startGateway({ config: gatewayConfig({ local: stdioServer(marker), broken }), logger, env: process.env });
    cleanup.add(() => within(local.close(), 15_000, 'gateway close'));
    const count = (msg: string) => lines.filter((line) => line.msg === msg && line.server === 'broken').length;
    // Its retries spread out (backoff) before the page starts refreshing.
    await waitUntil(() => count('upstream reconnect failed') >= 4, 'the broken server failing a few times', 30_000);
    const fetchStatus = async () => (await rawRequest(`${local.url}/admin/status`, { method: 'GET' })).json() as AdminStatus;
    expect(server(await fetchStatus(), 'broken').shown).toEqual({ unavailable: true });
    const leftOutBefore = count('upstream left out of a merged list');
    const attemptsBefore = count('upstream reconnect failed');
    const refreshes = 20;
    for (let i = 0; i < refreshes; i++) expect(server(await fetchStatus(), 'broken').shown).toEqual({ unavailable: true });
    const leftOut = count('upstream left out of a merged list') - leftOutBefore;
    const attempts = count('upstream reconnect failed') - attemptsBefore;
    // Counted anew only when its state moved (each background attempt: connecting, then error) —
    // four lists each time — never once per refresh (which would be 4 × 20 lines at least).
    expect(leftOut).toBeLessThanOrEqual(4 * 2 * (attempts + 1));
    expect(leftOut).toBeLessThan(refreshes);
  });
});
