/**
 * `authRequired` driven by a real OAuth-protected MCP server on 127.0.0.1 (the HTTP conformance
 * fixture behind an auth gate): its 401/403 challenge names protected resource metadata, which
 * the gateway fetches through the server's egress guard and publishes as RFC 9728 JSON with the
 * reason and the challenge's scopes; the server becomes `ready` once the gate lets it through.
 * No configured credential, URL of the upstream or text of the upstream's challenge reaches the
 * state's messages, and the metadata fetch carries none of the server's headers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ReadyProcess } from '../fixtures/spawn-until-ready.js';
import { httpServer, startHttpFixture } from '../integration/harness/upstreams.js';
import { assertBuilt } from '../integration/harness/paths.js';
import { Cleanup } from '../integration/harness/wait.js';
import { connectClient, errorOf } from '../integration/harness/clients.js';
import { startAuthGate, type AuthGate } from './auth-gate.js';
import { startPluginGateway } from './plugin-test-gateway.js';
import { openWatch, type WatchStream } from './watch-reader.js';

const cleanup = new Cleanup();
let fixture: ReadyProcess;
beforeAll(async () => {
  assertBuilt();
  fixture = await startHttpFixture();
});
afterAll(() => fixture?.stop());
afterEach(() => cleanup.run());

type Item = Record<string, any>;
const STALE = 'stale-secret-credential-42';

async function gate(): Promise<AuthGate> {
  const started = await startAuthGate(fixture.match);
  cleanup.add(() => started.close());
  return started;
}

/** Reads the watch stream until `server`'s state satisfies `until`; returns every state seen. */
async function statesUntil(watch: WatchStream, server: string, until: (state: Item) => boolean): Promise<Item[]> {
  const seen: Item[] = [];
  for (;;) {
    const item = watch.next().then((list) => list.items.find((i) => i.name === server) as Item);
    const state = (await item).state as Item;
    seen.push(state);
    if (until(state)) return seen;
  }
}

async function watchGateway(servers: Record<string, unknown>): Promise<{ url: string; watch: WatchStream }> {
  const { gateway } = await startPluginGateway(cleanup, { servers });
  const watch = await openWatch(`${gateway.url}/customizations`);
  cleanup.add(() => watch.close());
  return { url: gateway.url, watch };
}

describe('a server that asks for authorization', () => {
  it('shows authRequired (required) with its RFC 9728 metadata and scopes, then ready once let through', async () => {
    const notes = await gate();
    const { watch } = await watchGateway({ notes: httpServer(notes.url, { mode: 'optional' }) });
    const seen = await statesUntil(watch, 'notes', (s) => s.kind === 'authRequired');
    expect(seen.slice(0, -1).every((s) => s.kind === 'starting')).toBe(true);
    const state = seen.at(-1)!;
    const origin = new URL(notes.url).origin;
    expect(state).toEqual({
      kind: 'authRequired',
      reason: 'required',
      resource: {
        resource: `${origin}/mcp`,
        authorization_servers: [`${origin}/as`],
        scopes_supported: ['notes:read', 'notes:write'],
        bearer_methods_supported: ['header'],
        resource_name: 'Gated notes',
      },
      requiredScopes: ['notes:read'],
      description: 'server "notes" needs authorization',
    });
    expect(notes.metadataFetches).toBeGreaterThan(0);

    notes.mode = 'open';
    const after = await statesUntil(watch, 'notes', (s) => s.kind === 'ready');
    expect(after.at(-1)).toEqual({ kind: 'ready' });
  });

  it('shows expired for a refused credential, never echoing it, the URL or the challenge text', async () => {
    const notes = await gate();
    const { url, watch } = await watchGateway({ notes: httpServer(notes.url, { mode: 'optional', headers: { authorization: `Bearer ${STALE}` } }) });
    const seen = await statesUntil(watch, 'notes', (s) => s.kind === 'authRequired');
    expect(seen.at(-1)).toMatchObject({ kind: 'authRequired', reason: 'expired', requiredScopes: ['notes:read'] });
    const published = JSON.stringify(seen);
    for (const secret of [STALE, 'secret place', 'invalid_token', 'realm']) expect(published).not.toContain(secret);
    // The upstream credential went to the upstream only, never to the metadata document.
    for (const headers of notes.metadataHeaders) expect(JSON.stringify(headers)).not.toContain(STALE);

    // A client calling through the gateway gets the gateway's refusal, naming the server only.
    const client = await connectClient(cleanup, url, '2025');
    const error = await errorOf(client.client.request({ method: 'tools/call', params: { name: 'notes__test_simple_text', arguments: {} } }));
    expect(JSON.stringify(error)).not.toContain(STALE);
    expect(JSON.stringify(error)).not.toContain(notes.url);
  });

  it('shows insufficientScope for a 403 insufficient_scope, with the scopes the challenge names', async () => {
    const notes = await gate();
    notes.mode = 'insufficientScope';
    const { watch } = await watchGateway({ notes: httpServer(notes.url, { mode: 'optional' }) });
    const seen = await statesUntil(watch, 'notes', (s) => s.kind === 'authRequired');
    expect(seen.at(-1)).toMatchObject({
      kind: 'authRequired',
      reason: 'insufficientScope',
      requiredScopes: ['notes:read', 'notes:write'],
      description: 'server "notes" needs a credential with more scopes',
    });
  });

  it('refuses metadata that names another resource: error, with no URL in the message', async () => {
    const notes = await gate();
    notes.mode = 'foreignMetadata';
    const { watch } = await watchGateway({ notes: httpServer(notes.url, { mode: 'optional' }) });
    const seen = await statesUntil(watch, 'notes', (s) => s.kind === 'error');
    const state = seen.at(-1)!;
    expect(state.error.message).toContain('"notes"');
    expect(state.error.message).not.toMatch(/https?:|127\.0\.0\.1/);
    expect(JSON.stringify(seen)).not.toContain('elsewhere');
  });

  it('fetches the metadata only through the egress guard: a server without the private-network allowance gets none', async () => {
    const notes = await gate();
    // Without allowPrivateNetwork the guard refuses the loopback upstream itself; neither the
    // upstream nor its metadata is reached.
    const { watch } = await watchGateway({ notes: { transport: 'streamableHttp', url: notes.url, mode: 'optional' } });
    const seen = await statesUntil(watch, 'notes', (s) => s.kind === 'error');
    expect(seen.at(-1)!.error.errorType).toMatch(/^[A-Z_]+$/);
    expect(notes.metadataFetches).toBe(0);
  });
});
