/**
 * Soak for the pooled-connection isolation invariant (docs/architecture.md, "Attribution"):
 * 1,000 2026-era calls from two bearer principals, a fifth of them hung up at a random moment,
 * against a careless upstream over stdio and HTTP that keeps notifying (and, over stdio,
 * elicits) regardless of cancellation. Not one message of one principal — notification,
 * elicitation or result — may reach the other, and every replaced stdio child must be gone once
 * the gateway closes. Bounded: a fixed number of calls, eight at a time per principal.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../setup/random.js';
import type { RunningGateway } from '../../src/gateway.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  connectClient,
  FIXTURE_JS,
  newMarker,
  processesWithMarker,
  startGatewayFor,
  startHttpFixture,
  stdioServer,
  httpServer,
  textOf,
  waitUntil,
  within,
} from './harness.js';

const CALLS_PER_PRINCIPAL = 500;
const WORKERS_PER_PRINCIPAL = 8;
const HANG_UP_RATE = 0.2;
const NAMES = ['alice', 'bob'] as const;
/** Each principal's random choices (servers, sizes, hang-ups), drawn from the run's seed. */
const draws = new Map<string, ReturnType<typeof seededRandom>>(NAMES.map((name) => [name, seededRandom(`pool-soak ${name}`)]));

const perFile = new Cleanup();
const principals = bearerPrincipals(...NAMES);
const marker = newMarker();
let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const http = await startHttpFixture();
  perFile.add(() => http.stop());
  gateway = await startGatewayFor(
    perFile,
    principals,
    // The stdio upstream runs on after a cancellation and answers: every hung-up call keeps
    // talking on a connection that the next call (of either principal) is served on.
    { stdio: stdioServer(marker, { isolation: 'session', args: [FIXTURE_JS, '--stdio', '--ignore-cancellation'] }), http: httpServer(http.match, { isolation: 'session' }) },
    { statelessPool: { maxPerServer: 8, maxPerPrincipal: 4, cancelGraceMs: 100, maxWaitMs: 60_000 } },
  );
});
afterAll(() => perFile.run());

interface Tally {
  calls: number;
  hungUp: number;
  notifications: number;
  elicitations: number;
  /** Anything this principal received that carried another principal's tag. */
  foreign: string[];
}

/** One principal's client; every message it receives is checked against its own tag prefix. */
async function principalClient(name: string, cleanup: Cleanup, tally: Tally): Promise<Client> {
  const own = (tag: unknown) => typeof tag === 'string' && tag.startsWith(`${name}-`);
  const { client } = await connectClient(cleanup, gateway.url, '2026', {
    headers: principals.headers(name),
    capabilities: { elicitation: { form: {} } },
    setup: (c) =>
      c.setRequestHandler('elicitation/create', (request) => {
        tally.elicitations++;
        const message = String((request.params as { message?: unknown }).message);
        const tag = /^chatty (\S+) asks$/.exec(message)?.[1];
        if (!own(tag)) tally.foreign.push(`elicitation: ${message}`);
        return { action: 'accept', content: { answer: name } };
      }),
  });
  client.setNotificationHandler('notifications/message', (notification) => {
    tally.notifications++;
    const tag = (notification.params.data as { tag?: unknown } | undefined)?.tag;
    if (!own(tag)) tally.foreign.push(`notification: ${String(tag)}`);
  });
  return client;
}

/** One call: chatty on a random server, sometimes eliciting (stdio), sometimes hung up at a random moment. */
async function oneCall(client: Client, name: string, tally: Tally): Promise<void> {
  const random = draws.get(name)!;
  const server = random.int(2) === 0 ? 'stdio' : 'http';
  const tag = `${name}-${randomUUID()}`;
  const elicits = server === 'stdio' && random.int(5) === 0;
  const args = { tag, count: random.int(1, 10), intervalMs: random.int(0, 3), ...(elicits ? { elicitAfterMs: random.int(0, 20) } : {}) };
  const controller = new AbortController();
  const hangUp = random.chance(HANG_UP_RATE);
  // The hang-up at a random moment is the behaviour under test, not a wait for something.
  if (hangUp) setTimeout(() => controller.abort(), random.int(0, 40));
  tally.calls++;
  try {
    const result = await client.callTool({ name: `${server}__chatty`, arguments: args }, { signal: controller.signal });
    const text = textOf(result);
    if (!text.startsWith(`chatty ${tag} `)) tally.foreign.push(`result: ${text}`);
    if (elicits && text !== `chatty ${tag} answered ${name}`) tally.foreign.push(`answer: ${text}`);
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    tally.hungUp++;
  }
}

describe('two principals sharing pooled connections to a careless upstream', () => {
  it(`deliver 0 messages to each other over ${CALLS_PER_PRINCIPAL * NAMES.length} calls with random hang-ups`, { timeout: 240_000 }, async () => {
    const clients = new Cleanup();
    const tallies = new Map<string, Tally>();
    try {
      await Promise.all(
        NAMES.map(async (name) => {
          const tally: Tally = { calls: 0, hungUp: 0, notifications: 0, elicitations: 0, foreign: [] };
          tallies.set(name, tally);
          const client = await principalClient(name, clients, tally);
          let next = 0;
          const worker = async () => {
            while (next < CALLS_PER_PRINCIPAL) {
              next++;
              await oneCall(client, name, tally);
            }
          };
          await within(Promise.all(Array.from({ length: WORKERS_PER_PRINCIPAL }, worker)), 200_000, `${name}'s calls`);
        }),
      );
    } finally {
      await clients.run();
    }
    for (const [name, tally] of tallies) {
      expect(tally.foreign, `messages of the other principal that reached ${name}`).toEqual([]);
      expect(tally.calls).toBe(CALLS_PER_PRINCIPAL);
      // The soak exercised what it claims to: hang-ups, streamed notifications, elicitations.
      expect(tally.hungUp).toBeGreaterThan(CALLS_PER_PRINCIPAL * HANG_UP_RATE * 0.5);
      expect(tally.notifications).toBeGreaterThan(CALLS_PER_PRINCIPAL);
      expect(tally.elicitations).toBeGreaterThan(0);
    }
    await perFile.run();
    await waitUntil(() => processesWithMarker(marker).length === 0, 'every stdio child reaped once the gateway closed', 15_000);
  });
});
