/**
 * The pool of upstream connections for 2026-era calls cannot be starved (docs/architecture.md,
 * "Pooled connections"): a call that finds every connection busy is answered "busy, retry"
 * within `statelessPool.maxWaitMs` instead of hanging; one principal holds at most
 * `maxPerPrincipal` connections of a server, so its calls suspended for input (`input_required`)
 * cannot take the pool from everyone else; a suspended call is abandoned after `inputTtlMs`; and a
 * cancelled call's connection serves again as soon as the upstream answers that call.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningGateway } from '../../src/gateway.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  collectNotifications,
  connectClient,
  errorOf,
  FIXTURE_JS,
  newMarker,
  startGatewayFor,
  stdioServer,
  textOf,
  within,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const principals = bearerPrincipals('alice', 'bob', 'carol');
const looseResult = z.looseObject({});
/** A hang guard well past `maxWaitMs`: on failure the call hangs, it does not answer late. */
const HANG_GUARD_MS = 25_000;

let twoConnections: RunningGateway;
let careless: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const marker = newMarker();
  // Defaults but for the pool size: two connections, one per principal (half the pool).
  twoConnections = await startGatewayFor(perFile, principals, { stdio: stdioServer(marker, { isolation: 'session' }) }, { statelessPool: { maxPerServer: 2 } });
  // An upstream that runs on and answers after a cancellation; a long grace, so nothing is replaced.
  careless = await startGatewayFor(
    perFile,
    principals,
    { careless: stdioServer(marker, { isolation: 'session', args: [FIXTURE_JS, '--stdio', '--ignore-cancellation'] }) },
    { statelessPool: { maxPerServer: 1, cancelGraceMs: 20_000, maxWaitMs: 20_000, inputTtlMs: 500 } },
  );
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

async function as(gateway: RunningGateway, name: string): Promise<Client> {
  const { client } = await connectClient(perTest, gateway.url, '2026', {
    headers: principals.headers(name),
    capabilities: { elicitation: { form: {} } },
  });
  return client;
}

/** A call suspended for input: answered `input_required`, its upstream call waiting for the retry. */
async function suspendedElicitation(client: Client, server: string): Promise<Record<string, unknown>> {
  const result = await client.request(
    { method: 'tools/call', params: { name: `${server}__test_elicitation`, arguments: { message: `never answered ${randomUUID()}` } } },
    looseResult,
    { allowInputRequired: true },
  );
  expect(result.resultType).toBe('input_required');
  return result;
}

/** Starts `slow` and resolves once the upstream is running it; `stop()` hangs up. */
async function holdWithSlowCall(client: Client, server: string): Promise<{ stop(): Promise<void> }> {
  const controller = new AbortController();
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const call = client.callTool(
    { name: `${server}__slow`, arguments: { ms: 60_000, steps: 600 } },
    { signal: controller.signal, onprogress: () => started() },
  );
  call.catch(() => undefined);
  await within(running, HANG_GUARD_MS, 'the slow call to start');
  return {
    stop: async () => {
      controller.abort();
      await errorOf(call);
    },
  };
}

function expectBusy(error: { code?: number; message: string; data?: unknown }): void {
  expect(error.code).toBe(-32001);
  expect(error.message).toMatch(/upstream "stdio": busy.*retry/);
  expect(error.data).toEqual({ code: 'UPSTREAM_BUSY' });
}

describe('a 2026-era call when every pooled connection is held', () => {
  it('is answered "busy, retry" after the bounded wait instead of hanging', async () => {
    const held = [await holdWithSlowCall(await as(twoConnections, 'alice'), 'stdio'), await holdWithSlowCall(await as(twoConnections, 'bob'), 'stdio')];
    perTest.add(async () => {
      for (const call of held) await call.stop();
    });
    const carol = await as(twoConnections, 'carol');
    expectBusy(await within(errorOf(carol.callTool({ name: 'stdio__echo', arguments: { text: 'hi' } })), HANG_GUARD_MS, 'the busy answer'));
  });

  it('is still served when another principal holds its share in calls suspended for input', async () => {
    const alice = await as(twoConnections, 'alice');
    await suspendedElicitation(alice, 'stdio');
    // Alice holds her share (one of two); her next call waits for her own connection, not Bob's.
    const aliceAgain = errorOf(suspendedElicitation(alice, 'stdio'));
    const bob = await as(twoConnections, 'bob');
    const text = `bob-${randomUUID()}`;
    expect(textOf(await within(bob.callTool({ name: 'stdio__echo', arguments: { text } }), HANG_GUARD_MS, "bob's call"))).toBe(text);
    expectBusy(await within(aliceAgain, HANG_GUARD_MS, "the busy answer to alice's second call"));
  });
});

describe('a careless upstream that answers a cancelled call', () => {
  async function processInfo(client: Client): Promise<{ pid: number; activeChattyCalls: number }> {
    return JSON.parse(textOf(await client.callTool({ name: 'careless__process_info', arguments: {} }))) as {
      pid: number;
      activeChattyCalls: number;
    };
  }

  it('gets the connection back only once it answered, and the next principal is served on it', async () => {
    const alice = await as(careless, 'alice');
    const bob = await as(careless, 'bob');
    const before = await processInfo(alice);
    const logs = collectNotifications(alice, 'notifications/message');
    const controller = new AbortController();
    const call = alice.callTool(
      { name: 'careless__chatty', arguments: { tag: `alice-${randomUUID()}`, count: 40, intervalMs: 25 } },
      { signal: controller.signal },
    );
    await logs.waitFor(1);
    controller.abort();
    await errorOf(call);
    // Served on the same connection (answered, not replaced), and only after the upstream finished.
    expect(await processInfo(bob)).toEqual({ pid: before.pid, activeChattyCalls: 0 });
  });

  it('abandons a call suspended for input after inputTtlMs, so its connection serves again', async () => {
    const alice = await as(careless, 'alice');
    const before = await processInfo(alice);
    const suspended = await suspendedElicitation(alice, 'careless');
    const bob = await as(careless, 'bob');
    // The abandoned call's upstream request is answered with an error, so the upstream finishes
    // the call and the connection is reused rather than replaced.
    expect((await processInfo(bob)).pid).toBe(before.pid);
    const [key] = Object.keys(suspended.inputRequests as Record<string, unknown>);
    const late = await errorOf(
      alice.request(
        {
          method: 'tools/call',
          params: {
            name: 'careless__test_elicitation',
            arguments: { message: 'late' },
            inputResponses: { [key!]: { action: 'accept', content: { response: 'too late' } } },
            requestState: suspended.requestState,
          },
        },
        looseResult,
        { allowInputRequired: true },
      ),
    );
    // Once forgotten, the state is just unknown: it travels to the upstream, which refuses it too.
    expect(late.message).toMatch(/expired requestState|requestState is unknown or expired/i);
  });
});
