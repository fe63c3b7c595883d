/**
 * Many sessions, the default way (issue 22; docs/decisions.md, "Two wire decisions of the relay
 * core"): a config that names one stdio server and nothing else, and 900 2025-era sessions that
 * each initialise, call a tool and go away without DELETE — as the MCP Inspector CLI and many
 * scripts do. Under the default isolation (`principal`; without auth every client is the one
 * anonymous principal) every call is answered and the server costs a bounded number of child
 * processes, however many sessions forgot to end. Under the old default (`session`), the 33rd
 * such session was refused (`maxChildrenPerServer`) until a child idled out.
 *
 * 900 stays inside the default caps: `sessions.max` 1000 and `sessions.initializePerMinute` 1000
 * (policies/default.json); without auth there is no per-principal session cap beyond `max`.
 * Bounded: a fixed number of sessions, 12 at a time, each client closed (its sockets, no DELETE)
 * after its answer.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, Cleanup, killPids, newMarker, processesWithMarker, startTestGateway, stdioServer, textOf, within } from './harness.js';

const SESSIONS = 900;
const AT_ONCE = 12;

const perFile = new Cleanup();
beforeAll(() => assertBuilt());
afterAll(() => perFile.run());

/** One forgetful 2025 session: initialise, call `stdio__echo` once, close its sockets, never DELETE. */
async function forgetfulSession(url: string, index: number): Promise<{ answer: string; sessionId: string | undefined }> {
  const client = new Client({ name: `forgetful-${index}`, version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  try {
    await within(client.connect(transport), 30_000, `session ${index} connect`);
    const result = await within(client.callTool({ name: 'stdio__echo', arguments: { text: `call ${index}` } }), 30_000, `session ${index} call`);
    return { answer: textOf(result), sessionId: transport.sessionId };
  } finally {
    // client.close() ends the transport's own streams; it does not DELETE the session.
    await client.close().catch(() => undefined);
  }
}

describe('many 2025 sessions that never send DELETE, one stdio server, the default config', () => {
  it('answers every call of 900 forgetful sessions with a bounded number of child processes', async () => {
    const marker = newMarker();
    perFile.add(() => killPids(processesWithMarker(marker)));
    // No `isolation`: the default is what is tested.
    const gateway = await startTestGateway(perFile, { stdio: stdioServer(marker) });

    const answers: string[] = new Array<string>(SESSIONS);
    const sessionIds = new Set<string>();
    let mostChildren = processesWithMarker(marker).length;
    let next = 0;
    const worker = async () => {
      while (next < SESSIONS) {
        const index = next++;
        const { answer, sessionId } = await forgetfulSession(gateway.url, index);
        answers[index] = answer;
        if (sessionId !== undefined) sessionIds.add(sessionId);
        if (index % 50 === 0) mostChildren = Math.max(mostChildren, processesWithMarker(marker).length);
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, worker));

    expect(answers).toEqual(Array.from({ length: SESSIONS }, (_, i) => `call ${i}`));
    // Every session was its own (none reused, none ended by the client).
    expect(sessionIds.size).toBe(SESSIONS);
    // The primary and the one anonymous principal's connection: 2 processes, not one per session.
    const children = processesWithMarker(marker).length;
    mostChildren = Math.max(mostChildren, children);
    expect(children).toBe(2);
    expect(mostChildren).toBeLessThanOrEqual(2);
  }, 600_000);
});
