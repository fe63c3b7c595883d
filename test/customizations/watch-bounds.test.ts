/**
 * The watch stream's bounds against hostile or careless hosts, on a real gateway: at most
 * MAX_WATCHERS streams at once (the next one is refused 503 with Retry-After, through the error
 * taxonomy), and a watcher that hangs up gives its place back — hundreds of hang-ups later a new
 * watcher is still served, so no place leaks. One authenticated principal holds at most
 * MAX_WATCHERS_PER_PRINCIPAL of them, so its idle streams never shut another principal out.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MAX_WATCHERS, MAX_WATCHERS_PER_PRINCIPAL } from '../../src/customizations/routes.js';
import { bearerPrincipals, startGatewayFor } from '../integration/harness/principals.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { Cleanup, waitUntil } from '../integration/harness/wait.js';
import { startPluginGateway } from './plugin-test-gateway.js';
import { openWatch, type WatchStream } from './watch-reader.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
afterAll(() => killAllStdioChildren());

describe('customisation watchers', () => {
  it('serves at most MAX_WATCHERS at once and gives a place back on every hang-up', async () => {
    const { gateway } = await startPluginGateway(cleanup, {});
    const url = `${gateway.url}/customizations`;
    const open: WatchStream[] = [];
    cleanup.add(() => Promise.all(open.map((w) => w.close())).then(() => undefined));
    for (let i = 0; i < MAX_WATCHERS; i++) {
      const watch = await openWatch(url);
      await watch.next(); // served: the current list arrives first
      open.push(watch);
    }
    const refused = await fetch(`${url}?watch=1`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('too many customisation watchers');

    // Hang up every one; each place comes back (a leaked place would refuse the next round).
    for (const watch of open.splice(0)) await watch.close();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < MAX_WATCHERS; i++) {
        // A hang-up reaches the gateway a moment after the socket closes: retry a refusal until
        // the place is back (the hang guard fails the test if it never comes back).
        const watch = await waitUntil(async () => {
          const candidate = await openWatch(url);
          if (candidate.status === 200) return candidate;
          await candidate.close();
          return false;
        }, `watcher place ${i} of round ${round}`);
        await watch.next();
        open.push(watch);
      }
      for (const watch of open.splice(0)) await watch.close();
    }
    // A plain GET is never counted against watchers.
    expect((await fetch(url)).status).toBe(200);
  }, 120_000);

  it("keeps one principal to its share: alice's idle watchers past it are refused while bob's are served", async () => {
    const principals = bearerPrincipals('alice', 'bob');
    const gateway = await startGatewayFor(cleanup, principals, {});
    const url = `${gateway.url}/customizations`;
    const open: WatchStream[] = [];
    cleanup.add(() => Promise.all(open.map((w) => w.close())).then(() => undefined));
    for (let i = 0; i < MAX_WATCHERS_PER_PRINCIPAL; i++) {
      const watch = await openWatch(url, principals.headers('alice'));
      expect(watch.status).toBe(200);
      await watch.next();
      open.push(watch);
    }
    const refused = await fetch(`${url}?watch=1`, { headers: principals.headers('alice') });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(`for this principal (at most ${MAX_WATCHERS_PER_PRINCIPAL})`);
    // Bob is served beside alice's full share, and so is alice again once she hangs one up.
    const bob = await openWatch(url, principals.headers('bob'));
    open.push(bob);
    expect(bob.status).toBe(200);
    expect(Array.isArray((await bob.next()).items)).toBe(true);
    await open.shift()!.close();
    const again = await waitUntil(async () => {
      const candidate = await openWatch(url, principals.headers('alice'));
      if (candidate.status === 200) return candidate;
      await candidate.close();
      return false;
    }, "alice's place back after a hang-up");
    open.push(again);
    await again.next();
  }, 120_000);
});
