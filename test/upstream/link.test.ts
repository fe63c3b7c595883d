/**
 * One upstream link on its own, over a real stdio child: the handshake, forwarding with the call's
 * messages relayed before its result, the list cache and its invalidation, the open-request
 * bookkeeping, and what a dying child does to the link.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import type { UpstreamLink } from '../../src/upstream/link.js';
import type { LinkEvent } from '../../src/upstream/link.js';
import { assertBuilt } from '../integration/harness/paths.js';
import { connectFixture, recordingSink } from './fixture-link.js';

const links: UpstreamLink[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  await Promise.all(links.splice(0).map((link) => link.close()));
});

async function link(): Promise<UpstreamLink> {
  const connected = await connectFixture();
  links.push(connected);
  return connected;
}

function nextEvent(target: UpstreamLink, kind: LinkEvent['kind']): Promise<LinkEvent> {
  return new Promise((resolve) => {
    const off = target.on((event) => {
      if (event.kind !== kind) return;
      off();
      resolve(event);
    });
  });
}

describe('UpstreamLink', () => {
  it('completes the handshake and exposes the server’s capabilities and instructions', async () => {
    const fx = await link();
    expect(fx.closed).toBe(false);
    expect(fx.capabilities.tools).toBeDefined();
    expect(fx.instructions).toMatch(/Test fixture for Portcullis/);
    expect(fx.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('relays a call’s progress to that call’s sink under the client’s own token, all before the result', async () => {
    const fx = await link();
    const sink = recordingSink();
    const result = await fx.request('tools/call', { name: 'slow', arguments: { ms: 30, steps: 3 } }, { sink, meta: { progressToken: 'client-token' } });
    const seenAtResult = sink.seen.length;
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'slept 30ms' }] });
    expect(sink.seen.map((m) => [m.method, m.params?.progressToken, m.params?.progress])).toEqual([
      ['notifications/progress', 'client-token', 1],
      ['notifications/progress', 'client-token', 2],
      ['notifications/progress', 'client-token', 3],
    ]);
    expect(seenAtResult).toBe(3);
  });

  it('holds a request open until it is answered, and is idle only then', async () => {
    const fx = await link();
    expect(fx.idle).toBe(true);
    const call = fx.request('tools/call', { name: 'slow', arguments: { ms: 100, steps: 1 } }, { sink: recordingSink() });
    expect(fx.inFlightCount).toBe(1);
    expect(fx.idle).toBe(false);
    await call;
    expect(fx.inFlightCount).toBe(0);
    expect(fx.idle).toBe(true);
  });

  it('keeps a list until the upstream announces a change, then fetches it anew', async () => {
    const fx = await link();
    const first = (await fx.list('tools')) as Array<{ name: string }>;
    const version = fx.listVersion;
    expect(await fx.list('tools')).toBe(first);
    expect(fx.listVersion).toBe(version);
    const changed = nextEvent(fx, 'listChanged');
    await fx.request('tools/call', { name: 'toggle_tool', arguments: {} }, { sink: recordingSink() });
    expect(await changed).toEqual({ kind: 'listChanged', list: 'tools' });
    expect(fx.listVersion).not.toBe(version);
    const second = (await fx.list('tools')) as Array<{ name: string }>;
    expect(second).not.toBe(first);
    expect(second.length).not.toBe(first.length);
  });

  it('closes when its child dies: owners hear why, and later requests fail as unavailable', async () => {
    const fx = await link();
    const closed = nextEvent(fx, 'closed');
    await fx.request('tools/call', { name: 'crash', arguments: {} }, { sink: recordingSink() }).catch(() => undefined);
    expect(await closed).toMatchObject({ kind: 'closed' });
    expect(fx.closed).toBe(true);
    const error = await fx.request('tools/call', { name: 'echo', arguments: { text: 'x' } }, { sink: recordingSink() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('UPSTREAM_UNAVAILABLE');
  });

  it('announces a close the gateway asked for as such', async () => {
    const fx = await connectFixture();
    const closed = nextEvent(fx, 'closed');
    await fx.close();
    expect(await closed).toEqual({ kind: 'closed', reason: 'closed by gateway' });
  });
});
