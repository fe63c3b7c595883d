/**
 * Who may toggle, and every refusal of `POST <path>/customizations/toggle`, against a real
 * gateway with bearer authentication and a policy naming one admin: a session may set its own
 * session decisions only; workspace and global decisions need an admin; refusals come in a fixed
 * order (body, session, right, id) through the error taxonomy and change nothing.
 */
import { realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { connectClient } from '../integration/harness/clients.js';
import { bearerPrincipals } from '../integration/harness/principals.js';
import { rawRequest } from '../integration/harness/raw-http.js';
import { Cleanup, within } from '../integration/harness/wait.js';
import { fixture, tempDir } from '../plugins/plugin-test-helpers.js';
import { find, listOf, markedServer, toggle } from './enablement-helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

async function guardedGateway() {
  const principals = bearerPrincipals('alice', 'bob');
  const configDir = realpathSync(tempDir('portcullis-config-'));
  writeFileSync(path.join(configDir, 'policy.json'), JSON.stringify({ admins: ['alice'] }));
  const dice = markedServer();
  const raw = {
    listen: { host: '127.0.0.1', port: 0 },
    stateDir: path.join(configDir, 'state'),
    policy: './policy.json',
    auth: principals.auth,
    servers: { dice: dice.entry },
    plugins: [fixture('open-plugins-valid')],
  };
  const file = path.join(configDir, 'gateway.json');
  writeFileSync(file, JSON.stringify(raw));
  const gateway = await startGateway({ config: parseConfig(raw, { baseDir: configDir, file }), logger: silentLogger(), env: { ...process.env, ...principals.env } });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
  return { url: gateway.url, alice: principals.headers('alice'), bob: principals.headers('bob') };
}

describe('who may toggle', () => {
  it('lets admins set global and workspace decisions, and every session only its own', async () => {
    const { url, alice, bob } = await guardedGateway();
    const id = find(await listOf(url, alice), 'dice').id;
    const aliceSession = await connectClient(cleanup, url, '2025', { headers: alice });
    const bobSession = await connectClient(cleanup, url, '2025', { headers: bob });
    const asBob = (extra: Record<string, string> = {}) => ({ ...bob, ...extra });

    const bobGlobal = await toggle(url, { id, enabled: false, scope: 'global' }, bob);
    expect(bobGlobal.status).toBe(403);
    expect(bobGlobal.json().error).toMatchObject({ code: -32600, data: { code: 'TOGGLE_FORBIDDEN' } });
    expect((await toggle(url, { id, enabled: false, scope: 'workspace', workspace: 'file:///w' }, bob)).status).toBe(403);
    // A session decision needs the caller's own session.
    expect((await toggle(url, { id, enabled: false, scope: 'session' }, bob)).status).toBe(403);
    const stolen = await toggle(url, { id, enabled: false, scope: 'session' }, asBob({ 'mcp-session-id': aliceSession.transport.sessionId! }));
    expect(stolen.status).toBe(404);
    expect(stolen.json().error).toMatchObject({ data: { code: 'SESSION_NOT_FOUND' } });
    const stolenRead = await rawRequest(`${url}/customizations`, { method: 'GET', headers: asBob({ 'mcp-session-id': aliceSession.transport.sessionId! }) });
    expect(stolenRead.status).toBe(404);
    // Nothing changed by any refusal.
    expect(find(await listOf(url, alice), 'dice').enablement).toBeUndefined();

    const own = await toggle(url, { id, enabled: false, scope: 'session' }, asBob({ 'mcp-session-id': bobSession.transport.sessionId! }));
    expect(own.status).toBe(200);
    expect(find(JSON.parse(own.body).items, 'dice').enablement).toEqual([{ kind: 'session', enabled: false }]);
    expect(find(await listOf(url, alice, ''), 'dice').enablement).toBeUndefined();

    const aliceGlobal = await toggle(url, { id, enabled: false, scope: 'global' }, alice);
    expect(aliceGlobal.status).toBe(200);
    const workspace = await toggle(url, { id, enabled: true, scope: 'workspace', workspace: 'file:///w' }, alice);
    expect(find(JSON.parse(workspace.body).items, 'dice').enablement).toEqual([
      { kind: 'workspace', uri: 'file:///w', enabled: true },
      { kind: 'global', enabled: false },
    ]);
    expect((await rawRequest(`${url}/customizations/toggle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
  });

  it('answers unknown ids 404 (after the right is checked), agents 404, bad bodies 400, and changes nothing', async () => {
    const { url, alice, bob } = await guardedGateway();
    const items = await listOf(url, alice);
    const agent = find(items, 'op-kit:helper');
    const unknown = await toggle(url, { id: 'AAAAAAAAAAAAAAAAAAAAAA', enabled: false, scope: 'global' }, alice);
    expect(unknown.status).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: -32602, data: { code: 'UNKNOWN_CUSTOMIZATION' } });
    expect((await toggle(url, { id: agent.id, enabled: false, scope: 'global' }, alice)).status).toBe(404);
    // Without the right, an unknown id is not told apart from a known one.
    expect((await toggle(url, { id: 'AAAAAAAAAAAAAAAAAAAAAA', enabled: false, scope: 'global' }, bob)).status).toBe(403);

    const id = find(items, 'dice').id;
    const bad: Array<[unknown, number, number]> = [
      ['{not json', 400, -32700],
      [[{ id, enabled: false, scope: 'global' }], 400, -32600],
      [{ id, enabled: 'no', scope: 'global' }, 400, -32602],
      [{ id, enabled: false, scope: 'everyone' }, 400, -32602],
      [{ id, enabled: false, scope: 'global', extra: 1 }, 400, -32602],
      [{ id, enabled: false, scope: 'global', workspace: 'file:///w' }, 400, -32602],
      [{ id, enabled: false, scope: 'workspace', workspace: 'a\u0000b' }, 400, -32602],
      [{ id, enabled: false, scope: 'workspace' }, 400, -32602], // no workspace, no session to take it from
      [{ enabled: false, scope: 'global' }, 400, -32602],
    ];
    for (const [body, status, code] of bad) {
      const response = await toggle(url, body, alice);
      expect([JSON.stringify(body), response.status, response.json().error?.code]).toEqual([JSON.stringify(body), status, code]);
    }
    const wrongType = await rawRequest(`${url}/customizations/toggle`, { method: 'POST', headers: { ...alice, 'content-type': 'text/plain' }, body: '{}' });
    expect(wrongType.status).toBe(415);
    const huge = await toggle(url, { id, enabled: false, scope: 'global', pad: 'x'.repeat(20_000) }, alice);
    expect(huge.status).toBe(413);
    expect(find(await listOf(url, alice), 'dice').enablement).toBeUndefined();
  });
});
