/**
 * The real upstreams the gateway fronts in these tests, and the taps that show what reached them:
 * the conformance fixture over stdio (optionally behind a stdin recorder) and over Streamable HTTP
 * (optionally behind a recording proxy). Everything binds 127.0.0.1; processes stop by pid.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnUntilReady, type ReadyProcess } from '../../fixtures/spawn-until-ready.js';
import { FIXTURE_JS, newMarker } from './paths.js';
import { MARKER_VAR } from './processes.js';
import type { Cleanup } from './wait.js';

/** A stdio server entry running the fixture, its environment marked with `marker`. */
export function stdioServer(marker: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transport: 'stdio',
    command: process.execPath,
    args: [FIXTURE_JS, '--stdio'],
    env: { [MARKER_VAR]: marker },
    ...extra,
  };
}

/** A Streamable HTTP server entry for a loopback URL (loopback is a private network: allowed explicitly). */
export function httpServer(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { transport: 'streamableHttp', url, allowPrivateNetwork: true, ...extra };
}

/** Starts the fixture in HTTP mode on 127.0.0.1; `match` is its MCP URL. Stop it with `stop()`. */
export function startHttpFixture(): Promise<ReadyProcess> {
  return spawnUntilReady(process.execPath, [FIXTURE_JS, '--http'], { label: 'HTTP fixture', ready: /^FIXTURE_READY (\S+)$/ });
}

/** One JSON-RPC message seen on its way to an upstream, and what became of its exchange. */
export interface RecordedMessage {
  method?: string;
  id?: string | number;
  params?: Record<string, unknown>;
  /** HTTP only: the sender (the gateway) hung up before the upstream's answer ended. */
  abortedByClient: boolean;
}

/**
 * Runs the stdio fixture behind a pass-through that appends every byte the gateway writes to the
 * child's stdin to a log file (stdout and stderr stay the fixture's own). argv only:
 * `node -e SCRIPT LOG NODE_ARGS…`; the fixture inherits the marked environment.
 */
const STDIN_TEE = `
const { spawn } = require('node:child_process');
const { appendFileSync } = require('node:fs');
const [log, ...argv] = process.argv.slice(1);
const child = spawn(process.execPath, argv, { stdio: ['pipe', 'inherit', 'inherit'] });
process.stdin.on('data', (chunk) => { appendFileSync(log, chunk); child.stdin.write(chunk); });
process.stdin.on('end', () => child.stdin.end());
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => child.kill(s));
`;

/** A stdio server entry whose stdin traffic is recorded in `logFile` (read it with {@link recordedStdin}). */
export function recordingStdioServer(marker: string, logFile: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return stdioServer(marker, { args: ['-e', STDIN_TEE, logFile, FIXTURE_JS, '--stdio'], ...extra });
}

/** The JSON-RPC messages recorded by {@link recordingStdioServer} so far (every child shares the file). */
export function recordedStdin(logFile: string): RecordedMessage[] {
  if (!existsSync(logFile)) return [];
  const out: RecordedMessage[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    try {
      const parsed = JSON.parse(line) as RecordedMessage;
      out.push({ method: parsed.method, id: parsed.id, params: parsed.params, abortedByClient: false });
    } catch {
      // an empty line, or the last one while it is still being written
    }
  }
  return out;
}

export interface RecordingProxy {
  readonly url: string;
  /** Live records: `abortedByClient` flips when the gateway hangs up on an exchange. */
  readonly messages: RecordedMessage[];
  close(): Promise<void>;
}

/**
 * A transparent HTTP proxy on 127.0.0.1 in front of `target` that records every JSON-RPC message
 * POSTed through it, and whether the sender hung up before the answer ended (how a 2026-era
 * client cancels: it aborts the request's stream). Lets a test see what reached an upstream.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const messages: RecordedMessage[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let record: RecordedMessage | undefined;
      if (req.method === 'POST') {
        try {
          const parsed = JSON.parse(body.toString('utf8')) as RecordedMessage;
          record = { method: parsed.method, id: parsed.id, params: parsed.params, abortedByClient: false };
          messages.push(record);
        } catch {
          // not JSON: forwarded as is, not recorded
        }
      }
      let answered = false;
      const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host };
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('end', () => (answered = true));
        answer.pipe(res);
      });
      res.on('close', () => {
        if (answered) return;
        if (record !== undefined) record.abortedByClient = true;
        forward.destroy();
      });
      forward.on('error', () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    messages,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What most test files front: the HTTP fixture behind a recording proxy, and a recorded stdio fixture. */
export interface Upstreams {
  /** Marks this file's stdio fixtures (see `processesWithMarker`). */
  readonly marker: string;
  readonly httpFixture: ReadyProcess;
  /** Sits between the gateway and the HTTP fixture; `proxy.messages` is what reached it. */
  readonly proxy: RecordingProxy;
  /** Where the recorded stdio fixtures' stdin goes (read with {@link recordedStdin}). */
  readonly stdinLog: string;
  /** Server entries `stdio` (recorded stdio fixture) and `http` (the fixture through the proxy). */
  servers(extra?: { stdio?: Record<string, unknown>; http?: Record<string, unknown> }): Record<string, unknown>;
}

/** Starts the upstreams of {@link Upstreams}; stopped by `cleanup` (by pid). */
export async function startUpstreams(cleanup: Cleanup): Promise<Upstreams> {
  const marker = newMarker();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-it-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  const httpFixture = await startHttpFixture();
  cleanup.add(() => httpFixture.stop());
  const proxy = await startRecordingProxy(httpFixture.match);
  cleanup.add(() => proxy.close());
  const stdinLog = join(dir, 'stdio-stdin.jsonl');
  return {
    marker,
    httpFixture,
    proxy,
    stdinLog,
    servers: (extra = {}) => ({
      stdio: recordingStdioServer(marker, stdinLog, extra.stdio),
      http: httpServer(proxy.url, extra.http),
    }),
  };
}
