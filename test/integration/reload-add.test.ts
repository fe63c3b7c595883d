/**
 * Hot reload adding servers, on the `portcullis` executable as an operator runs it (a real child
 * process) with real SDK clients of both eras: a server the new file names is started and joins
 * every list while a 2025 session's call streams progress across the reload (the session hears
 * `tools/list_changed` on its open standalone stream and calls the new server; a 2026 listener
 * hears it too), its side channel answers, the customisation list and `/readyz` include it; an
 * entry the policy refuses makes the whole reload invalid and keeps the running configuration,
 * logging every problem without a secret; a new server that cannot start shows its error state
 * without keeping another added beside it from serving; a server added, removed and named again
 * serves again on the same session; with authentication, the policy's access rules decide who
 * sees the new server, as for every server (a gateway in this process, reloaded through its API).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { logged, startReloadable, type ReloadableGateway } from './harness/reload-gateway.js';
import { startGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  collectNotifications,
  connectClient,
  errorOf,
  gatewayConfig,
  killPids,
  newMarker,
  processesWithMarker,
  spawnCli,
  stdioServer,
  textOf,
  waitUntil,
  within,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-reload-add-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const SECRET = 'sk-reload-add-do-not-echo-5813';

type Client = Awaited<ReturnType<typeof connectClient>>['client'];
const toolNames = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

/** A gateway over the `local` fixture only; `other` is the marker of the fixture a reload adds. */
const startWithLocal = () => startReloadable(perTest, dir, {}, (m) => ({ local: stdioServer(m.local) }));

/** Writes the file and runs `portcullis reload`, which answers once the gateway has; resolves with what it printed. */
async function reloadWith(gw: ReloadableGateway, servers: Parameters<ReloadableGateway['write']>[0], times = 1, code = 0): Promise<string> {
  gw.write(servers);
  const command = spawnCli(perTest, ['reload', '--config', gw.path]);
  expect((await command.exited()).code).toBe(code);
  await logged(gw.cli, 'reloaded', times);
  return command.stdout() + command.stderr();
}

const listed = async (gw: ReloadableGateway) =>
  ((await (await fetch(`${gw.url}/customizations`)).json()) as { items: Array<{ name: string; state: { kind: string } }> }).items;
const readiness = async (gw: ReloadableGateway) =>
  (await (await fetch(gw.url.replace(/\/mcp$/, '/readyz'))).json()) as { status: string; servers: Array<{ server: string; state: string }> };

describe('reloading a configuration that names a new server', () => {
  it('starts it and adds it to every list while a session streams: list_changed, calls in both eras, side channel, customisation list, /readyz', async () => {
    const gw = await startWithLocal();
    const { client, transport } = await connectClient(perTest, gw.url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    expect(await toolNames(client)).toEqual(expect.arrayContaining(['local__echo']));
    expect(await toolNames(client)).not.toContain('added__echo');
    const session = transport.sessionId;
    const modern = (await connectClient(perTest, gw.url, '2026')).client;
    const modernChanged = collectNotifications(modern, 'notifications/tools/list_changed');
    const subscription = await modern.listen({ toolsListChanged: true });
    perTest.add(() => subscription.close().catch(() => undefined));
    expect(processesWithMarker(gw.markers.other)).toEqual([]);

    // A call streaming progress on the session when the reload starts runs on to its result.
    let progressed!: () => void;
    const running = new Promise<void>((resolve) => (progressed = resolve));
    const slow = client.callTool({ name: 'local__slow', arguments: { ms: 1500, steps: 15 } }, { onprogress: () => progressed() });
    await running;

    await reloadWith(gw, (m) => ({ local: stdioServer(m.local), added: stdioServer(m.other, { enabledTools: ['echo', 'slow', 'no_such_tool'] }) }));
    expect(gw.cli.stderr()).toMatch(/"added":\["added"\]/);
    await logged(gw.cli, 'servers.added.enabledTools names 1 tool(s) the upstream does not list'); // checked as at start
    expect(gw.cli.stderr()).toMatch(/"failed":\[\]/);
    expect(textOf(await slow)).toBe('slept 1500ms');
    await changed.waitFor(1);
    expect(await toolNames(client)).toEqual(expect.arrayContaining(['local__echo', 'added__echo', 'added__slow']));
    expect(textOf(await client.callTool({ name: 'added__echo', arguments: { text: 'to the new one' } }))).toBe('to the new one');
    expect(transport.sessionId).toBe(session);
    expect(processesWithMarker(gw.markers.other).length).toBeGreaterThanOrEqual(2); // the primary and the session's own child

    await modernChanged.waitFor(1);
    expect(await toolNames(modern)).toContain('added__echo');
    expect(textOf(await modern.callTool({ name: 'added__echo', arguments: { text: 'modern' } }))).toBe('modern');

    const side = (await connectClient(perTest, `${gw.url}/servers/added`, '2026')).client;
    expect(await toolNames(side)).toContain('echo');
    expect(textOf(await side.callTool({ name: 'echo', arguments: { text: 'side' } }))).toBe('side');
    const legacySide = (await connectClient(perTest, `${gw.url}/servers/added`, '2025')).client;
    expect(textOf(await legacySide.callTool({ name: 'echo', arguments: { text: 'side 2025' } }))).toBe('side 2025');

    await waitUntil(async () => ((await listed(gw)).find((i) => i.name === 'added')?.state.kind === 'ready' ? true : undefined), 'the customisation list showing added ready');
    const ready = await readiness(gw);
    expect(ready.status).toBe('ready');
    expect(ready.servers).toEqual(expect.arrayContaining([{ server: 'added', mode: 'required', state: 'ready' }]));
    const metrics = await (await fetch(gw.url.replace(/\/mcp$/, '/metrics'))).text();
    expect(metrics).toContain('portcullis_upstream_state{server="added",state="ready"} 1');
    expect(metrics).toMatch(/portcullis_stdio_children\{server="added"\} [1-9]/);
  }, 90_000); // a hang guard: several CLI runs, each waiting for the gateway to answer its reload

  it('refuses a new entry the policy forbids, keeping the running configuration and naming every problem without a secret', async () => {
    const gw = await startWithLocal();
    const { client } = await connectClient(perTest, gw.url, '2025');
    gw.write((m) => ({
      local: stdioServer(m.local),
      // A variable the default policy never sets on a child, and plain HTTP to a private address.
      preloaded: stdioServer(m.other, { env: { LD_PRELOAD: `/tmp/${SECRET}.so` } }),
      internal: { transport: 'streamableHttp', url: `http://10.20.30.40/${SECRET}/mcp` },
    }));
    gw.cli.child.kill('SIGHUP');
    await logged(gw.cli, 'reload refused: the new configuration is invalid');
    await logged(gw.cli, 'reload problem', 2);
    expect(gw.cli.stderr()).toContain('servers.preloaded.env.LD_PRELOAD');
    expect(gw.cli.stderr()).toContain('servers.internal.url');
    expect(gw.cli.stderr()).not.toContain(SECRET);
    expect(processesWithMarker(gw.markers.other)).toEqual([]);
    expect(await toolNames(client)).not.toContain('preloaded__echo');
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'still' } }))).toBe('still');
    expect((await readiness(gw)).servers.map((s) => s.server)).toEqual(['local']);
    const channel = await fetch(`${gw.url}/servers/preloaded`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(channel.status).toBe(404);
  });

  it('adds the servers that start beside one that cannot, which shows its error state and keeps retrying', async () => {
    const gw = await startWithLocal();
    const { client } = await connectClient(perTest, gw.url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    const report = await reloadWith(
      gw,
      (m) => ({
        local: stdioServer(m.local),
        added: stdioServer(m.other),
        missing: { transport: 'stdio', command: join(dir, 'no-such-command'), mode: 'optional' },
      }),
      1,
      1,
    );
    expect(report).toContain('reload applied:\n  added: added, missing\n');
    expect(report).toMatch(/did not come up .*: missing\n/);
    expect(gw.cli.stderr()).toMatch(/"failed":\["missing"\]/);
    expect(gw.cli.stderr()).toContain('added upstream did not come up');
    await changed.waitFor(1);
    expect(textOf(await client.callTool({ name: 'added__echo', arguments: { text: 'works' } }))).toBe('works');
    const names = await toolNames(client);
    expect(names).toContain('added__echo');
    expect(names.some((name) => name.startsWith('missing__'))).toBe(false);
    const missing = (await listed(gw)).find((i) => i.name === 'missing');
    expect(missing?.state.kind).toBe('error');
    const ready = await readiness(gw);
    expect(ready.status).toBe('ready'); // an optional server is not waited for
    expect(ready.servers.find((s) => s.server === 'missing')?.state).toBe('error');
    expect(ready.servers.find((s) => s.server === 'added')?.state).toBe('ready');
  });

  it('serves a server added, removed and named again on the same session, its side channel answering again, the admin page following', async () => {
    const gw = await startReloadable(perTest, dir, { admin: { enabled: true } }, (m) => ({ local: stdioServer(m.local) }));
    const admin = async () =>
      (await (await fetch(`${gw.url}/admin/status`)).json()) as { servers: Array<{ name: string; state: string }>; sessions: Array<{ endpoint: string }> };
    const { client, transport } = await connectClient(perTest, gw.url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    const session = transport.sessionId;
    const withOther = (m: ReloadableGateway['markers']) => ({ local: stdioServer(m.local), other: stdioServer(m.other) });

    await reloadWith(gw, withOther);
    await changed.waitFor(1);
    expect(textOf(await client.callTool({ name: 'other__echo', arguments: { text: 'first' } }))).toBe('first');

    await reloadWith(gw, (m) => ({ local: stdioServer(m.local) }), 2);
    expect(gw.cli.stderr()).toMatch(/"removed":\["other"\]/);
    await changed.waitFor(2);
    await waitUntil(() => (processesWithMarker(gw.markers.other).length === 0 ? true : undefined), 'every child of other exiting');
    expect((await errorOf(client.callTool({ name: 'other__echo', arguments: { text: 'gone' } }))).code).toBe(-32602);
    expect((await admin()).servers.map((s) => s.name)).toEqual(['local']);

    // Named again, through the admin page's reload this time: its answer is the outcome.
    gw.write(withOther);
    const answer = await fetch(`${gw.url}/admin/reload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(await answer.json()).toMatchObject({ applied: true, added: ['other'], removed: [], failed: [] });
    await changed.waitFor(3);
    expect(await toolNames(client)).toContain('other__echo');
    expect(textOf(await client.callTool({ name: 'other__echo', arguments: { text: 'again' } }))).toBe('again');
    expect(transport.sessionId).toBe(session);
    const side = (await connectClient(perTest, `${gw.url}/servers/other`, '2026')).client;
    expect(textOf(await side.callTool({ name: 'echo', arguments: { text: 'side again' } }))).toBe('side again');
    expect((await listed(gw)).map((i) => i.name)).toContain('other');
    expect((await readiness(gw)).servers.map((s) => s.server).sort()).toEqual(['local', 'other']);
    const status = await admin();
    expect(status.servers.find((s) => s.name === 'other')?.state).toBe('ready');
    expect(status.sessions.map((s) => s.endpoint)).toContain('servers/other');
  }, 90_000); // a hang guard: several CLI runs, each waiting for the gateway to answer its reload

  it('refuses naming a removed server again with another isolation, as needing a restart', async () => {
    const gw = await startReloadable(perTest, dir);
    await reloadWith(gw, (m) => ({ local: stdioServer(m.local) }));
    gw.write((m) => ({ local: stdioServer(m.local), other: stdioServer(m.other, { isolation: 'shared' }) }));
    gw.cli.child.kill('SIGHUP');
    await logged(gw.cli, 'reload refused: these changes need a restart');
    expect(gw.cli.stderr()).toContain('servers.other.isolation: differs from the server of that name a reload removed');
    expect((await readiness(gw)).servers.map((s) => s.server)).toEqual(['local']);
  });
});

describe('reloading a new server under access rules', () => {
  it('shows it to the principal the rules let see it, and to the other neither in lists nor as a callable name, in both eras; audit lines name it and why', async () => {
    const markers = { local: newMarker(), added: newMarker() };
    perTest.add(() => killPids([...processesWithMarker(markers.local), ...processesWithMarker(markers.added)]));
    const policy = join(dir, `access-${process.pid}.json`);
    writeFileSync(policy, JSON.stringify({ access: { default: 'allow', rules: [{ name: 'bob-never-added', principals: ['bob'], effect: 'deny', servers: ['added'] }] } }));
    const principals = bearerPrincipals('alice', 'bob');
    const audit = join(dir, `audit-${process.pid}.jsonl`);
    const configWith = (servers: Record<string, unknown>) => gatewayConfig(servers, { auth: principals.auth, policy, audit: { sink: audit } });
    let next = configWith({ local: stdioServer(markers.local) });
    const gateway = await startGateway({ config: next, logger: silentLogger(), env: { ...process.env, ...principals.env }, reloadConfig: async () => next });
    perTest.add(() => within(gateway.close(), 15_000, 'gateway close'));
    const alice = await connectClient(perTest, gateway.url, '2025', { headers: principals.headers('alice') });
    const bob = await connectClient(perTest, gateway.url, '2025', { headers: principals.headers('bob') });
    const aliceModern = await connectClient(perTest, gateway.url, '2026', { headers: principals.headers('alice') });
    const bobModern = await connectClient(perTest, gateway.url, '2026', { headers: principals.headers('bob') });
    const aliceChanged = collectNotifications(alice.client, 'notifications/tools/list_changed');

    // Isolated per principal: each caller that may use it gets a connection of its own.
    next = configWith({ local: stdioServer(markers.local), added: stdioServer(markers.added, { disabledTools: ['slow'], isolation: 'principal' }) });
    const outcome = await gateway.reload('admin');
    expect(outcome).toMatchObject({ applied: true, added: ['added'], failed: [] });

    await aliceChanged.waitFor(1);
    expect(await toolNames(alice.client)).toContain('added__echo');
    expect(textOf(await alice.client.callTool({ name: 'added__echo', arguments: { text: 'alice' } }))).toBe('alice');
    expect(await toolNames(aliceModern.client)).toContain('added__echo');
    expect(textOf(await aliceModern.client.callTool({ name: 'added__echo', arguments: { text: 'alice 2026' } }))).toBe('alice 2026');
    expect(processesWithMarker(markers.added)).toHaveLength(2); // the primary and alice's own
    for (const client of [bob.client, bobModern.client]) {
      const names = await toolNames(client);
      expect(names).toContain('local__echo');
      expect(names).not.toContain('added__echo');
      const refused = await errorOf(client.callTool({ name: 'added__echo', arguments: { text: 'bob' } }));
      expect(refused.code).toBe(-32602);
    }
    // The audit lines name the new server and why its names were hidden: the rule, or its filter.
    expect((await errorOf(alice.client.callTool({ name: 'added__slow', arguments: { ms: 1 } }))).code).toBe(-32602);
    await new Promise((resolve) => setImmediate(resolve)); // the sink writes one tick's lines on the next
    const lines = readFileSync(audit, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
    const of = (principal: string, tool: string) => lines.filter((line) => line.principal === principal && line.tool === tool);
    expect(of('bob', 'added__echo')).toHaveLength(2);
    for (const line of of('bob', 'added__echo')) expect(line).toMatchObject({ decision: 'denied', rule: 'bob-never-added', server: 'added' });
    expect(of('alice', 'added__echo')[0]).toMatchObject({ decision: 'allowed', server: 'added' });
    expect(of('alice', 'added__slow')[0]).toMatchObject({ decision: 'filtered', server: 'added' });
    expect(processesWithMarker(markers.added)).toHaveLength(2); // bob's refusals opened nothing
  });
});
