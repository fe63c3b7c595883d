/**
 * Hot reload on the `portcullis` executable as an operator runs it (a real child process), with a
 * real SDK client whose session and standalone stream stay open throughout: a tool-filter change
 * (`portcullis reload`) reaches the session as `tools/list_changed` and hides the tool from list
 * and call without restarting anything; a changed server entry (SIGHUP) restarts that server
 * only while a call to the other one runs to its end; a server dropped from the file is
 * withdrawn (children reaped, gone from lists, side channel and customisation list) while the
 * session and a 2026 listener carry on; an invalid file keeps the running configuration and logs
 * every problem without a secret; a change only a restart can apply is refused; the opt-in file
 * watch reloads on its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { logged, startReloadable } from './harness/reload-gateway.js';
import {
  assertBuilt,
  Cleanup,
  collectNotifications,
  connectClient,
  errorOf,
  FIXTURE_JS,
  processesWithMarker,
  spawnCli,
  stdioServer,
  textOf,
  waitUntil,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-reload-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const SECRET = 'sk-reload-do-not-echo-4711';

const start = (extra: Record<string, unknown> = {}) => startReloadable(perTest, dir, extra);

const toolNames = async (client: Awaited<ReturnType<typeof connectClient>>['client']) => (await client.listTools()).tools.map((t) => t.name);

describe('reloading a tool-filter change', () => {
  it('tells the open 2025 session and a 2026 listener tools/list_changed, hides the tool from list and call, and restarts nothing', async () => {
    const gw = await start();
    const { client, transport } = await connectClient(perTest, gw.url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    expect(await toolNames(client)).toContain('local__echo');
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'before' } }))).toBe('before');
    const session = transport.sessionId;
    // A 2026-era client with an open subscriptions/listen stream hears of it too.
    const modern = (await connectClient(perTest, gw.url, '2026')).client;
    const modernChanged = collectNotifications(modern, 'notifications/tools/list_changed');
    const subscription = await modern.listen({ toolsListChanged: true });
    perTest.add(() => subscription.close().catch(() => undefined));
    expect(await toolNames(modern)).toContain('local__echo');
    const pids = { local: processesWithMarker(gw.markers.local), other: processesWithMarker(gw.markers.other) };

    gw.write((m) => ({ local: stdioServer(m.local, { disabledTools: ['echo'] }), other: stdioServer(m.other) }));
    const command = spawnCli(perTest, ['reload', '--config', gw.path]);
    expect((await command.exited()).code).toBe(0);
    // The command waited for the gateway's answer and reports what it applied.
    expect(command.stdout()).toBe('reload applied:\n  tool filters re-applied: local\n');
    await changed.waitFor(1);
    await logged(gw.cli, 'reloaded');

    expect(await toolNames(client)).not.toContain('local__echo');
    expect(await toolNames(client)).toContain('other__echo');
    await modernChanged.waitFor(1);
    expect(await toolNames(modern)).not.toContain('local__echo');
    const hidden = await errorOf(client.callTool({ name: 'local__echo', arguments: { text: 'after' } }));
    expect(hidden.code).toBe(-32602);
    // Same session, same processes: a filter change restarts nothing.
    expect(transport.sessionId).toBe(session);
    expect(processesWithMarker(gw.markers.local)).toEqual(pids.local);
    expect(processesWithMarker(gw.markers.other)).toEqual(pids.other);
    // The listen stream and the 2026 client's calls carry on.
    expect(textOf(await modern.callTool({ name: 'other__echo', arguments: { text: 'modern' } }))).toBe('modern');
  });
});

describe('reloading a changed server entry', () => {
  it('restarts that server only; a call to the other runs on to its result, and the session keeps working', async () => {
    const gw = await start();
    const { client, transport } = await connectClient(perTest, gw.url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    await client.callTool({ name: 'local__echo', arguments: { text: 'warm' } });
    const session = transport.sessionId;
    const before = { local: processesWithMarker(gw.markers.local), other: processesWithMarker(gw.markers.other) };
    expect(before.local).toHaveLength(2); // the primary and the session's own child

    let progressed!: () => void;
    const running = new Promise<void>((resolve) => (progressed = resolve));
    const slow = client.callTool({ name: 'other__slow', arguments: { ms: 1500, steps: 15 } }, { onprogress: () => progressed() });
    await running;
    const otherDuring = processesWithMarker(gw.markers.other);

    gw.write((m) => ({ local: stdioServer(m.local, { env: { EXTRA_SETTING: 'changed' } }), other: stdioServer(m.other) }));
    gw.cli.child.kill('SIGHUP');
    await logged(gw.cli, 'reloaded');
    expect(gw.cli.stderr()).toMatch(/"restarted":\["local"\]/);

    expect(textOf(await slow)).toBe('slept 1500ms');
    await changed.waitFor(1);
    // Every process of `local` is new; `other` kept the ones it had.
    await waitUntil(() => (processesWithMarker(gw.markers.local).every((pid) => !before.local.includes(pid)) ? true : undefined), 'the old children of local exiting');
    expect(processesWithMarker(gw.markers.other)).toEqual(otherDuring);
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'again' } }))).toBe('again');
    expect(transport.sessionId).toBe(session);
  });
});

describe('reloading a configuration without one of its servers', () => {
  it('reaps its children, drops it from every list, its side channel and the customisation list, and keeps the session and the listener', async () => {
    const gw = await start();
    const { client, transport } = await connectClient(perTest, gw.url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    expect(textOf(await client.callTool({ name: 'other__echo', arguments: { text: 'before' } }))).toBe('before');
    const session = transport.sessionId;
    const modern = (await connectClient(perTest, gw.url, '2026')).client;
    const modernChanged = collectNotifications(modern, 'notifications/tools/list_changed');
    const subscription = await modern.listen({ toolsListChanged: true });
    perTest.add(() => subscription.close().catch(() => undefined));
    const side = (await connectClient(perTest, `${gw.url}/servers/other`, '2026')).client;
    expect(await toolNames(side)).toContain('echo');
    const listed = async () => ((await (await fetch(`${gw.url}/customizations`)).json()) as { items: Array<{ name: string }> }).items.map((i) => i.name);
    expect(await listed()).toContain('other');
    const before = { local: processesWithMarker(gw.markers.local), other: processesWithMarker(gw.markers.other) };
    expect(before.other).toHaveLength(2); // the primary and the session's own child

    gw.write((m) => ({ local: stdioServer(m.local) }));
    const command = spawnCli(perTest, ['reload', '--config', gw.path]);
    expect((await command.exited()).code).toBe(0);
    await logged(gw.cli, 'reloaded');
    expect(gw.cli.stderr()).toMatch(/"removed":\["other"\]/);
    await changed.waitFor(1);
    await modernChanged.waitFor(1);

    await waitUntil(() => (processesWithMarker(gw.markers.other).length === 0 ? true : undefined), 'every child of other exiting');
    expect(processesWithMarker(gw.markers.local)).toEqual(before.local);
    expect(await toolNames(client)).not.toContain('other__echo');
    expect(await toolNames(modern)).not.toContain('other__echo');
    const gone = await errorOf(client.callTool({ name: 'other__echo', arguments: { text: 'after' } }));
    expect(gone.code).toBe(-32602);
    expect(gone.message).toContain('other__echo');
    const channel = await fetch(`${gw.url}/servers/other`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(channel.status).toBe(404);
    expect(await listed()).not.toContain('other');
    const ready = (await (await fetch(gw.url.replace(/\/mcp$/, '/readyz'))).json()) as { servers: Array<{ server: string }> };
    expect(ready.servers.map((s) => s.server)).toEqual(['local']);
    // The same session and the 2026 client keep working on what is left.
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'still' } }))).toBe('still');
    expect(transport.sessionId).toBe(session);
    expect(textOf(await modern.callTool({ name: 'local__echo', arguments: { text: 'modern' } }))).toBe('modern');
  });
});

describe('reloading a configuration that cannot be applied', () => {
  it('keeps the running one when the new file is invalid, logging every problem and no secret', async () => {
    const gw = await start();
    const { client } = await connectClient(perTest, gw.url, '2025');
    gw.write(() => ({
      local: { transport: 'stdio', command: process.execPath, args: [FIXTURE_JS, '--stdio', SECRET], mode: 'sometimes' },
      broken: { transport: 'stdio', env: { TOKEN: SECRET } },
    }));
    gw.cli.child.kill('SIGHUP');
    await logged(gw.cli, 'reload refused: the new configuration is invalid');
    await logged(gw.cli, 'reload problem', 2);
    expect(gw.cli.stderr()).toContain('servers.local.mode');
    expect(gw.cli.stderr()).toContain('servers.broken');
    expect(gw.cli.stderr()).not.toContain(SECRET);
    // The running configuration still serves.
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'still' } }))).toBe('still');
    expect(await toolNames(client)).toContain('other__echo');
  });

  it('refuses a change only a restart can apply, naming the field, and adds nothing else it names; `portcullis reload` says so and exits 1', async () => {
    const gw = await start();
    const { client } = await connectClient(perTest, gw.url, '2025');
    gw.write((m) => ({ local: stdioServer(m.local), other: stdioServer(m.other), added: stdioServer(m.other) }), { sessions: { max: 3 }, audit: { sink: 'stderr' } });
    const command = spawnCli(perTest, ['reload', '--config', gw.path]);
    expect((await command.exited()).code).toBe(1);
    expect(command.stdout()).toBe('');
    expect(command.stderr()).toContain('reload refused: the gateway keeps its running configuration\n  these need a restart (stop the gateway and start it again):\n');
    expect(command.stderr()).toContain('    - sessions: changed; this setting applies when the gateway starts\n');
    expect(command.stderr()).toContain('    - audit: changed; this setting applies when the gateway starts\n');
    await logged(gw.cli, 'reload refused: these changes need a restart');
    expect(gw.cli.stderr()).toContain('sessions: changed');
    expect(gw.cli.stderr()).not.toContain('servers.added');
    expect(await toolNames(client)).not.toContain('added__echo');
    expect(textOf(await client.callTool({ name: 'local__echo', arguments: { text: 'unchanged' } }))).toBe('unchanged');
  });

  it('`portcullis reload` exits 1 on an invalid file and never signals the gateway', async () => {
    const gw = await start();
    gw.write(() => ({ local: { transport: 'stdio' } }));
    const command = spawnCli(perTest, ['reload', '--config', gw.path]);
    expect((await command.exited()).code).toBe(1);
    expect(command.stderr()).toContain('servers.local');
    expect(gw.cli.stderr()).not.toContain('reload');
  });
});

describe('the opt-in file watch', () => {
  it('reloads when the config file changes', async () => {
    const gw = await start({ lifecycle: { watch: true } });
    await logged(gw.cli, 'watching the config for changes');
    const { client } = await connectClient(perTest, gw.url, '2025');
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    gw.write((m) => ({ local: stdioServer(m.local), other: stdioServer(m.other, { enabledTools: ['echo'] }) }));
    await changed.waitFor(1);
    await logged(gw.cli, 'reloaded');
    const names = await toolNames(client);
    expect(names).toContain('other__echo');
    expect(names).not.toContain('other__slow');
    expect(names).toContain('local__slow');
  });
});
