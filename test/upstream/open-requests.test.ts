/**
 * OpenRequests is what attribution is proved against: a call is the provable cause of what an
 * upstream sends only while its request is the only one open, and a request the SDK gave up on
 * (cancelled, timed out) stays open until the upstream answers it or the connection closes.
 * `send` here stands in for `Client.request`, which hands its request to the transport
 * synchronously; the transport's side is `noteSent`.
 */
import { describe, expect, it } from 'vitest';
import { OpenRequests } from '../../src/upstream/open-requests.js';

interface Sent {
  settle(outcome: 'answered' | 'abandoned'): void;
  done: Promise<unknown>;
}

/** Sends one request for `call` with JSON-RPC id `id`; `settle` answers it or gives it up. */
function sendOne(requests: OpenRequests<string>, call: string | undefined, id: number): Sent {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const done = requests.send(call, () => {
    requests.noteSent({ jsonrpc: '2.0', id, method: 'tools/call' });
    return new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
  });
  done.catch(() => undefined);
  return {
    done,
    settle: (outcome) => {
      if (outcome === 'answered') {
        requests.answered(id);
        resolve();
      } else reject(new Error('aborted'));
    },
  };
}

describe('OpenRequests', () => {
  it('names the call whose request is the only one open, and nobody once it is answered', async () => {
    const requests = new OpenRequests<string>();
    const a = sendOne(requests, 'A', 1);
    expect(requests.soleLiveCall()).toBe('A');
    a.settle('answered');
    await a.done;
    expect(requests.soleLiveCall()).toBeUndefined();
    expect(requests.idle).toBe(true);
  });

  it('names nobody while two requests are open', () => {
    const requests = new OpenRequests<string>();
    sendOne(requests, 'A', 1);
    sendOne(requests, undefined, 2);
    expect(requests.soleLiveCall()).toBeUndefined();
  });

  it('keeps an abandoned request open, naming nobody, until the upstream answers it', async () => {
    const requests = new OpenRequests<string>();
    const a = sendOne(requests, 'A', 1);
    a.settle('abandoned');
    await expect(a.done).rejects.toThrow('aborted');
    expect(requests.idle).toBe(false);
    expect(requests.soleLiveCall()).toBeUndefined();
    const idle = requests.whenIdle(60_000);
    requests.answered('1'); // the SDK matches ids by Number(): "1" answers 1
    await expect(idle).resolves.toBe(true);
    expect(requests.idle).toBe(true);
  });

  it('reports a connection not fit to serve again when the grace passes or it closes first', async () => {
    const requests = new OpenRequests<string>();
    sendOne(requests, 'A', 1).settle('abandoned');
    await expect(requests.whenIdle(10)).resolves.toBe(false);
    const waiting = requests.whenIdle(60_000);
    requests.clear();
    await expect(waiting).resolves.toBe(false);
    expect(requests.idle).toBe(true);
  });

  it('does not track a request sent outside `send` (the link’s subscriptions/listen stream)', () => {
    const requests = new OpenRequests<string>();
    requests.noteSent({ jsonrpc: '2.0', id: 9, method: 'subscriptions/listen' });
    expect(requests.idle).toBe(true);
    sendOne(requests, 'A', 1);
    expect(requests.soleLiveCall()).toBe('A');
  });
});
