/**
 * Gateway replicas as operators run them — `portcullis` processes on 127.0.0.1 sharing the test
 * Redis under one key root — and a hand-driven 2025-era client of their sessions: POST a call,
 * resume a stream with `Last-Event-ID` on any replica, read a call's answer to its end.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { spawnCli, type CliProcess } from '../integration/harness/cli.js';
import { newMarker } from '../integration/harness/paths.js';
import { killPids, processesWithMarker } from '../integration/harness/processes.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { waitUntil, within, type Cleanup } from '../integration/harness/wait.js';
import { SHARED_REDIS_URL } from '../session/redis-helpers.js';
import { readSse, type SseEvent, type WireMessage } from '../session/sse-client.js';

const READY = /^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:\d+\/mcp)$/;
const PROTOCOL_VERSION = '2025-11-25';
export const LEASE_MS = 1_500;

export interface Replica {
  cli: CliProcess;
  url: string;
}

/** Starts one replica (its own config file, port 0, replica id, fixture marker; `extra` config fields). */
export async function startReplica(cleanup: Cleanup, prefix: string, replicaId: string, extra: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): Promise<Replica> {
  const marker = newMarker();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-cluster-'));
  const path = join(dir, 'config.json');
  writeFileSync(
    path,
    JSON.stringify({
      servers: { fx: stdioServer(marker) },
      eventStore: { kind: 'redis', url: SHARED_REDIS_URL, keyPrefix: prefix, allowPrivateNetwork: true },
      cluster: { replicaId, leaseMs: LEASE_MS, allowPrivateNetwork: true },
      ...extra,
    }),
  );
  const cli = spawnCli(cleanup, ['--config', path, '--port', '0'], env);
  cleanup.add(() => {
    killPids(processesWithMarker(marker));
    rmSync(dir, { recursive: true, force: true });
  });
  // Graceful first (registered last, so it runs before the SIGKILL fallback).
  cleanup.add(async () => {
    if (cli.child.exitCode !== null || cli.child.signalCode !== null) return;
    cli.child.kill('SIGTERM');
    await cli.exited(15_000).catch(() => undefined);
  });
  const url = await cli.waitForLine(READY, 30_000);
  return { cli, url };
}

export function sessionHeaders(sessionId: string, extra: Record<string, string> = {}): Record<string, string> {
  return { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL_VERSION, ...extra };
}

export function postInSession(url: string, sessionId: string, message: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: sessionHeaders(sessionId, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
    body: JSON.stringify(message),
    signal,
  });
}

export function resume(url: string, sessionId: string, lastEventId: string, signal?: AbortSignal): Promise<Response> {
  return fetch(url, { method: 'GET', headers: sessionHeaders(sessionId, { accept: 'text/event-stream', 'last-event-id': lastEventId }), signal });
}

/** Resumes on `url` (retrying a 409/502/503 while the stream is released or the session moves), reading until `stop`. */
export async function resumeUntil(url: string, sessionId: string, lastEventId: string, stop: (m: WireMessage) => boolean): Promise<SseEvent[]> {
  const response = await waitUntil(
    async () => {
      const answer = await resume(url, sessionId, lastEventId);
      if ([409, 502, 503].includes(answer.status)) {
        await answer.body?.cancel();
        return undefined;
      }
      return answer;
    },
    'a resume that is not refused as busy or moving',
    15_000,
    100,
  );
  expect(response.status).toBe(200);
  const events: SseEvent[] = [];
  const ending = await within(
    readSse(response.body!, (event) => {
      events.push(event);
      return event.data.trim() === '' || !stop(JSON.parse(event.data) as WireMessage);
    }),
    20_000,
    'the resumed stream to deliver the awaited message',
  );
  expect(ending).toBe('stopped');
  await response.body?.cancel().catch(() => undefined);
  return events;
}

/** Sends a request and reads its answer to the end: one JSON body, or an SSE stream. */
export async function callInSession(url: string, sessionId: string, id: number, name: string, args: Record<string, unknown>): Promise<WireMessage[]> {
  const response = await postInSession(url, sessionId, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  expect(response.status).toBe(200);
  if ((response.headers.get('content-type') ?? '').startsWith('application/json')) return [(await response.json()) as WireMessage];
  const messages: WireMessage[] = [];
  await within(
    readSse(response.body!, (event) => {
      if (event.data.trim() !== '') messages.push(JSON.parse(event.data) as WireMessage);
      return true;
    }),
    20_000,
    `${name} to answer`,
  );
  return messages;
}

export const resultText = (message: WireMessage | undefined) =>
  ((message?.result as { content?: Array<{ text?: string }> } | undefined)?.content ?? [])[0]?.text;
