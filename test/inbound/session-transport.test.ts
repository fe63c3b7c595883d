import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionHttpTransport } from '../../src/inbound/session-transport.js';
import type { SessionEventStore } from '../../src/session/event-store.js';
import { createMemoryEventStore } from '../../src/session/memory-event-store.js';
import { ResumeRefused, resumeProblem } from '../../src/session/event-id.js';
import { readSse, type SseEvent } from '../session/sse-client.js';

const SESSION = 'session-1';
const URL_ = 'http://127.0.0.1/mcp';
const VERSIONS = ['2025-03-26', '2025-06-18', '2025-11-25'];
const ACCEPT = 'application/json, text/event-stream';

type Handler = (message: JSONRPCMessage, extra: MessageExtraInfo | undefined, transport: SessionHttpTransport) => void;

const open: SessionHttpTransport[] = [];
afterEach(async () => {
  for (const transport of open.splice(0)) await transport.close();
});

interface Setup {
  transport: SessionHttpTransport;
  store: SessionEventStore | undefined;
  initialized: string[];
  closed: string[];
}

async function setup(handler: Handler, options: { streamAfterMs?: number; store?: boolean | SessionEventStore } = {}): Promise<Setup> {
  const store =
    options.store === false
      ? undefined
      : typeof options.store === 'object'
        ? options.store
        : createMemoryEventStore({ limit: 1_000, maxSessions: 4 }).forSession(SESSION);
  const initialized: string[] = [];
  const closed: string[] = [];
  const transport = new SessionHttpTransport({
    sessionId: SESSION,
    ...(store === undefined ? {} : { eventStore: store, retryIntervalMs: 1_000 }),
    streamAfterMs: options.streamAfterMs ?? 60_000,
    onSessionInitialized: (id) => void initialized.push(id),
    onSessionClosed: (id) => void closed.push(id),
  });
  transport.setSupportedProtocolVersions(VERSIONS);
  transport.onmessage = (message, extra) => {
    const m = message as { method?: string; id?: number };
    if (m.method === 'initialize') {
      void transport.send({ jsonrpc: '2.0', id: m.id!, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } } });
      return;
    }
    handler(message, extra, transport);
  };
  open.push(transport);
  const init = await transport.handleRequest(post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }, false), {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  });
  expect(init.status).toBe(200);
  return { transport, store, initialized, closed };
}

function post(body: unknown, withSession = true, headers: Record<string, string> = {}): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...(withSession ? { 'mcp-session-id': SESSION, 'mcp-protocol-version': '2025-11-25' } : {}), ...headers },
    body: JSON.stringify(body),
  });
}

function get(headers: Record<string, string> = {}): Request {
  return new Request(URL_, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': SESSION, ...headers } });
}

async function call(transport: SessionHttpTransport, id: number, headers: Record<string, string> = {}): Promise<Response> {
  const body = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {} } };
  return transport.handleRequest(post(body, true, headers), body);
}

async function eventsOf(response: Response): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  await readSse(response.body!, (event) => {
    events.push(event);
    return true;
  });
  return events;
}

const result = (id: number, text = 'ok'): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });
const progress = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: n } });

describe('SessionHttpTransport: how a call is answered', () => {
  it('answers a call whose only message is its result with one JSON body', async () => {
    const { transport } = await setup((message, _extra, t) => void t.send(result((message as { id: number }).id)));
    const response = await call(transport, 1);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('mcp-session-id')).toBe(SESSION);
    expect(await response.json()).toEqual(result(1));
    expect(transport.openStreams).toBe(0);
  });

  it('streams a call that sends a notification before its result: priming event, the notification, the result, end', async () => {
    const { transport } = await setup((message, _extra, t) => {
      const id = (message as { id: number }).id;
      void t.send(progress(1), { relatedRequestId: id });
      void t.send(result(id));
    });
    const response = await call(transport, 2);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = await eventsOf(response);
    expect(events[0]).toMatchObject({ data: '', retry: 1_000 });
    expect(events[0]!.id).toBeTruthy();
    expect(events.slice(1).map((e) => JSON.parse(e.data))).toEqual([progress(1), result(2)]);
    expect(events.slice(1).every((e) => e.id !== undefined)).toBe(true);
  });

  it('turns a call still running after streamAfterMs into a stream before its result exists', async () => {
    let answer!: () => void;
    const { transport } = await setup((message, _extra, t) => {
      answer = () => void t.send(result((message as { id: number }).id));
    }, { streamAfterMs: 20 });
    const response = await call(transport, 3);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(transport.openStreams).toBe(1);
    answer();
    const events = await eventsOf(response);
    expect(events.map((e) => e.data)).toEqual(['', JSON.stringify(result(3))]);
    expect(transport.openStreams).toBe(0);
  });

  it('streams every call from its first byte with streamAfterMs 0', async () => {
    const { transport } = await setup((message, _extra, t) => void t.send(result((message as { id: number }).id)), { streamAfterMs: 0 });
    const response = await call(transport, 4);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect((await eventsOf(response)).map((e) => e.data)).toEqual(['', JSON.stringify(result(4))]);
  });

  it('sends no priming event to a client older than 2025-11-25, and none without an event store', async () => {
    const handler: Handler = (message, _extra, t) => {
      const id = (message as { id: number }).id;
      void t.send(progress(1), { relatedRequestId: id });
      void t.send(result(id));
    };
    const old = await setup(handler);
    const oldEvents = await eventsOf(await call(old.transport, 5, { 'mcp-protocol-version': '2025-06-18' }));
    expect(oldEvents.map((e) => JSON.parse(e.data))).toEqual([progress(1), result(5)]);
    const storeless = await setup(handler, { store: false });
    const plain = await eventsOf(await call(storeless.transport, 6));
    expect(plain.map((e) => JSON.parse(e.data))).toEqual([progress(1), result(6)]);
    expect(plain.every((e) => e.id === undefined)).toBe(true);
  });
});

describe('SessionHttpTransport: polling and resumption', () => {
  it('closes a pending call’s stream on request (polling) and delivers its result on resume', async () => {
    let finish!: () => Promise<void>;
    const { transport } = await setup((message, extra, t) => {
      const id = (message as { id: number }).id;
      finish = () => t.send(result(id));
      extra!.closeSSEStream!();
    });
    const response = await call(transport, 7);
    const first = await eventsOf(response); // ends: the stream was closed, the call goes on
    expect(first).toHaveLength(1);
    expect(first[0]!.data).toBe('');
    await finish();
    const resumed = await transport.handleRequest(get({ 'last-event-id': first[0]!.id! }));
    expect((await eventsOf(resumed)).map((e) => JSON.parse(e.data))).toEqual([result(7)]);
  });

  it('attaches a resumed stream before reading its history: an event stored during the replay arrives once, after it', async () => {
    const base = createMemoryEventStore({ limit: 1_000, maxSessions: 4 }).forSession(SESSION);
    let beforeRead: (() => Promise<void>) | undefined;
    let afterRead: (() => Promise<void>) | undefined;
    const store: SessionEventStore = {
      ...base,
      replayEventsAfter: async (lastEventId, options) => {
        // Events of the stream are stored and sent while the replay runs: one just before the
        // history is read (it is in the history and comes live too), one just after (only live).
        await beforeRead?.();
        const streamId = await base.replayEventsAfter(lastEventId, options);
        await afterRead?.();
        return streamId;
      },
    };
    let send!: (m: JSONRPCMessage) => Promise<void>;
    let id!: number;
    const { transport } = await setup(
      (message, extra, t) => {
        id = (message as { id: number }).id;
        send = (m) => t.send(m, { relatedRequestId: id });
        void send(progress(1)).then(() => extra!.closeSSEStream!());
      },
      { store },
    );
    const first = await eventsOf(await call(transport, 8));
    expect(first.map((e) => e.data)).toEqual(['', JSON.stringify(progress(1))]);
    beforeRead = () => send(progress(2));
    afterRead = () => send(progress(3));
    const resumed = await transport.handleRequest(get({ 'last-event-id': first[0]!.id! }));
    beforeRead = afterRead = undefined;
    await send(progress(4));
    await transport.send(result(id));
    const events = (await eventsOf(resumed)).map((e) => JSON.parse(e.data));
    expect(events).toEqual([progress(1), progress(2), progress(3), progress(4), result(8)]);
  });

  it.each([
    ['410 when the history was evicted while it was being replayed', new ResumeRefused(resumeProblem('evicted')), 410],
    ['503 when the store fails while replaying', new Error('connection lost'), 503],
  ] as const)('answers a replay that fails part way %s, never a bare 500', async (_what, failure, status) => {
    const base = createMemoryEventStore({ limit: 1_000, maxSessions: 4 }).forSession(SESSION);
    const store: SessionEventStore = {
      ...base,
      replayEventsAfter: async (lastEventId, options) => {
        // Something was sent before it failed: none of it may reach the client.
        await options.send(`${lastEventId}0`, progress(99));
        throw failure;
      },
    };
    const { transport } = await setup((message, extra, t) => {
      void t.send(progress(1), { relatedRequestId: (message as { id: number }).id }).then(() => extra!.closeSSEStream!());
    }, { store });
    const first = await eventsOf(await call(transport, 12));
    const resumed = await transport.handleRequest(get({ 'last-event-id': first[0]!.id! }));
    expect(resumed.status).toBe(status);
    const body = (await resumed.json()) as { error: { code: number; message: string } };
    expect(body.error.message).not.toMatch(/Error replaying events/);
  });

  it('cuts a call’s stream whose client leaves more than 32 MiB unread; what it missed stays resumable', async () => {
    const big = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(1024 * 1024), n } });
    let sent!: Promise<void>;
    const { transport } = await setup((message, _extra, t) => {
      const id = (message as { id: number }).id;
      sent = (async () => {
        for (let n = 0; n < 48; n += 1) await t.send(big(n), { relatedRequestId: id });
      })();
    }, { store: createMemoryEventStore({ limit: 1_000, maxSessions: 4, maxSessionBytes: 64 * 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 }).forSession(SESSION) });
    const response = await call(transport, 30);
    // The client reads the priming event, then stops reading.
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const primingId = /id: (\S+)/.exec(first)![1]!;
    await sent;
    // Cut: what was queued is dropped, the connection fails.
    await expect(reader.read()).rejects.toThrow(/aborted/);
    // The client resumes from the last id it read and gets every event from the history.
    const resumed = await transport.handleRequest(get({ 'last-event-id': primingId }));
    expect(resumed.status).toBe(200);
    const again = resumed.body!.getReader();
    let text = '';
    const count = () => text.split('"n":').length - 1;
    while (count() < 48) {
      const { value, done } = await again.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await again.cancel();
    expect(count()).toBe(48);
  });

  it('refuses a second connection to a stream that has one with 409', async () => {
    const { transport } = await setup((message, extra, t) => void t.send(progress(1), { relatedRequestId: (message as { id: number }).id }));
    const response = await call(transport, 9);
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    const primingId = /id: (\S+)/.exec(new TextDecoder().decode(value))![1]!;
    const conflict = await transport.handleRequest(get({ 'last-event-id': primingId }));
    expect(conflict.status).toBe(409);
    await reader.cancel();
  });
});

describe('SessionHttpTransport: refusals use the statuses of the SDK transport and the gateway taxonomy', () => {
  const idle: Handler = () => undefined;

  it.each([
    ['no text/event-stream in Accept', 406, -32600, { accept: 'application/json' }],
    ['an unsupported protocol version', 400, -32600, { 'mcp-protocol-version': '1999-01-01' }],
    ['another session’s id', 404, -32600, { 'mcp-session-id': 'other' }],
  ])('answers a POST with %s with HTTP %i and code %i', async (_what, status, code, headers) => {
    const { transport } = await setup(idle);
    const body = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const response = await transport.handleRequest(post(body, true, headers), body);
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } });
  });

  it('refuses a malformed message with 400 -32600 and a second initialize with 400 -32600', async () => {
    const { transport } = await setup(idle);
    const bad = { jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 };
    const refused = await transport.handleRequest(post(bad), bad);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const again = { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } };
    const twice = await transport.handleRequest(post(again), again);
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it('accepts a notification with 202 and hands it to the server', async () => {
    const seen: JSONRPCMessage[] = [];
    const { transport } = await setup((message) => void seen.push(message));
    const note = { jsonrpc: '2.0', method: 'notifications/initialized' };
    expect((await transport.handleRequest(post(note), note)).status).toBe(202);
    expect(seen).toEqual([note]);
  });

  it('allows one standalone GET stream (409 for a second) and answers PUT with 405 and Allow', async () => {
    const { transport } = await setup(idle);
    const first = await transport.handleRequest(get());
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    expect((await transport.handleRequest(get())).status).toBe(409);
    const put = await transport.handleRequest(new Request(URL_, { method: 'PUT', headers: { 'mcp-session-id': SESSION } }));
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST, DELETE');
    await first.body!.cancel();
  });

  it('sends server messages unrelated to a call on the standalone stream', async () => {
    const { transport } = await setup(idle);
    const stream = await transport.handleRequest(get());
    const note: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
    await transport.send(note);
    await transport.closeStandaloneSSEStream();
    expect((await eventsOf(stream)).map((e) => JSON.parse(e.data))).toEqual([note]);
  });
});

describe('SessionHttpTransport: ending', () => {
  it('answers a call pending when the session closes with 404, and ends open streams', async () => {
    const { transport } = await setup(() => undefined);
    const pending = call(transport, 1);
    const standalone = await transport.handleRequest(get());
    await transport.close();
    expect((await pending).status).toBe(404);
    expect(await eventsOf(standalone)).toEqual([]);
    expect(transport.openStreams).toBe(0);
  });

  it('ends a cancelled call’s answer and forgets it: a late response has nowhere to go', async () => {
    let id!: number;
    const { transport } = await setup((message) => void (id = (message as { id: number }).id));
    const pending = call(transport, 5);
    transport.endCancelled(5);
    const response = await pending;
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect((await eventsOf(response)).filter((e) => e.data !== '')).toEqual([]);
    await expect(transport.send(result(id))).rejects.toThrow(/No connection established/);
  });

  it('refuses a second call under an id in flight; the client’s cancellation ends the first and frees the id', async () => {
    const { transport } = await setup(() => undefined);
    const pending = call(transport, 6);
    const twice = await call(transport, 6);
    expect(twice.status).toBe(400);
    expect(await twice.json()).toMatchObject({ id: null, error: { code: -32600, message: expect.stringMatching(/already in flight/) } });
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 6, reason: 'test' } };
    expect((await transport.handleRequest(post(cancel), cancel)).status).toBe(202);
    expect((await eventsOf(await pending)).filter((e) => e.data !== '')).toEqual([]);
    const again = call(transport, 6);
    await transport.send(result(6, 'again'));
    expect(await (await again).json()).toMatchObject({ id: 6, result: { content: [{ text: 'again' }] } });
  });

  it('closes on DELETE after telling the session', async () => {
    const { transport, closed } = await setup(() => undefined);
    const response = await transport.handleRequest(new Request(URL_, { method: 'DELETE', headers: { 'mcp-session-id': SESSION } }));
    expect(response.status).toBe(200);
    expect(closed).toEqual([SESSION]);
    expect((await call(transport, 1)).status).toBe(404);
  });
});

describe('SessionHttpTransport: answers nobody reads, and failures', () => {
  it('closes an SSE answer nobody started reading (the client left first), freeing the standalone slot', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      const { transport } = await setup(() => undefined);
      const abandoned = await transport.handleRequest(get()); // never read: as when the socket was gone
      expect(abandoned.status).toBe(200);
      expect((await transport.handleRequest(get())).status).toBe(409);
      vi.advanceTimersByTime(10_001);
      expect(transport.openStreams).toBe(0);
      const next = await transport.handleRequest(get());
      expect(next.status).toBe(200);
      const reader = next.body!.getReader(); // taken: survives the same wait
      vi.advanceTimersByTime(10_001);
      expect(transport.openStreams).toBe(1);
      await reader.cancel();
    } finally {
      vi.useRealTimers();
    }
  });

  it('delivers a response sent during a replay on the resumed stream even when storing it is slow', async () => {
    const base = createMemoryEventStore({ limit: 1_000, maxSessions: 4 }).forSession(SESSION);
    let slow = false;
    let releaseStore!: () => void;
    let duringReplay: (() => void) | undefined;
    const store: SessionEventStore = {
      ...base,
      storeEvent: async (streamId, message) => {
        if (slow) await new Promise<void>((resolve) => (releaseStore = resolve));
        return base.storeEvent(streamId, message);
      },
      replayEventsAfter: async (lastEventId, options) => {
        duringReplay?.();
        return base.replayEventsAfter(lastEventId, options);
      },
    };
    let id!: number;
    const { transport } = await setup(
      (message, extra, t) => {
        id = (message as { id: number }).id;
        void t.send(progress(1), { relatedRequestId: id }).then(() => extra!.closeSSEStream!());
      },
      { store },
    );
    const first = await eventsOf(await call(transport, 9));
    duringReplay = () => {
      slow = true;
      void transport.send(result(id)); // answered while the resume replays; its store is slow
    };
    const resumed = await transport.handleRequest(get({ 'last-event-id': first[0]!.id! }));
    duringReplay = undefined;
    slow = false;
    releaseStore();
    expect((await eventsOf(resumed)).map((e) => JSON.parse(e.data))).toEqual([progress(1), result(9)]);
  });

  it('answers with an error, after what the call already sent, when the server throws on a request', async () => {
    const { transport } = await setup((message, _extra, t) => {
      void t.send(progress(1), { relatedRequestId: (message as { id: number }).id });
      throw new Error('handler blew up');
    }, { streamAfterMs: 0 });
    const events = (await eventsOf(await call(transport, 11))).filter((e) => e.data !== '').map((e) => JSON.parse(e.data));
    expect(events).toEqual([progress(1), { jsonrpc: '2.0', id: 11, error: { code: -32603, message: 'internal gateway error' } }]);
  });

  it('ends on close the streams of requests answered but still storing their response', async () => {
    const base = createMemoryEventStore({ limit: 1_000, maxSessions: 4 }).forSession(SESSION);
    let hold = false;
    let holding!: () => void;
    const responseHeld = new Promise<void>((resolve) => (holding = resolve));
    const store: SessionEventStore = {
      ...base,
      storeEvent: (streamId, message) => {
        if (!hold) return base.storeEvent(streamId, message);
        holding();
        return new Promise<string>(() => undefined);
      },
    };
    const { transport } = await setup((message, _extra, t) => {
      const id = (message as { id: number }).id;
      void t.send(progress(1), { relatedRequestId: id }).then(() => {
        hold = true; // the store stops answering: the response is never stored
        void t.send(result(id));
      });
    }, { store });
    const response = await call(transport, 12);
    const reading = eventsOf(response);
    await responseHeld;
    expect(transport.openStreams).toBe(1);
    await transport.close();
    expect(transport.openStreams).toBe(0);
    await reading;
  });
});
