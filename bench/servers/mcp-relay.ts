/**
 * A minimal MCP-aware relay on 127.0.0.1: the floor of what a message-level gateway costs
 * (issue 22: "a minimal MCP-aware relay — parse, route by name, forward — as the floor of what
 * this issue builds"). Each POSTed JSON-RPC message is parsed once; a `tools/call` named
 * `echo__<tool>` is forwarded as `<tool>` (the gateway's namespacing undone), a `tools/list`
 * answer gets its names prefixed back; every JSON answer is parsed, its id checked against the
 * request's, and written out again. It knows one upstream, no policy, no auth, no sessions of its
 * own (the upstream's `Mcp-Session-Id` passes through), no SSE rewriting (a streamed answer is
 * piped as is). Nothing here is the gateway's code: it is a yardstick.
 *
 *   node dist/bench/servers/mcp-relay.js --port N --upstream http://127.0.0.1:P/mcp
 *   prints `MCP_RELAY_READY http://127.0.0.1:PORT/mcp`
 */
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' } } });
const upstream = new URL(values.upstream ?? '');
if (upstream.protocol !== 'http:' || upstream.hostname !== '127.0.0.1') throw new TypeError('--upstream must be an http://127.0.0.1 URL');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const PREFIX = 'echo__';
const MAX_BODY = 4 * 1024 * 1024;
/** Request headers the relay passes on; everything else (hop-by-hop, host) stays here. */
const FORWARDED = ['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];

interface Message {
  id?: string | number | null;
  method?: string;
  params?: { name?: unknown };
  result?: { tools?: Array<{ name: string }> };
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(undefined));
  });
}

function fail(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message } }));
}

function relay(req: IncomingMessage, res: ServerResponse, body: string | undefined, sent: Message | undefined): void {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const out = request({ host: '127.0.0.1', port: upstream.port, method: req.method, path: upstream.pathname, headers, agent }, (answer) => {
    const type = answer.headers['content-type'] ?? '';
    const back: Record<string, string> = {};
    for (const name of ['content-type', 'mcp-session-id']) {
      const value = answer.headers[name];
      if (typeof value === 'string') back[name] = value;
    }
    if (sent?.id === undefined || !type.startsWith('application/json')) {
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
      return;
    }
    const chunks: Buffer[] = [];
    answer.on('data', (chunk: Buffer) => chunks.push(chunk));
    answer.on('end', () => {
      let reply: Message;
      try {
        reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Message;
      } catch {
        fail(res, 502, 'upstream answered with invalid JSON');
        return;
      }
      if (reply.id !== sent.id) {
        fail(res, 502, 'upstream answered another request id');
        return;
      }
      const tools = reply.result?.tools;
      if (sent.method === 'tools/list' && Array.isArray(tools)) for (const tool of tools) tool.name = PREFIX + tool.name;
      res.writeHead(answer.statusCode ?? 502, back);
      res.end(JSON.stringify(reply));
    });
  });
  out.on('error', () => res.destroy());
  out.end(body);
}

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    relay(req, res, undefined, undefined);
    return;
  }
  void readBody(req).then((raw) => {
    if (raw === undefined) return fail(res, 413, 'body too large');
    let message: Message;
    try {
      message = JSON.parse(raw.toString('utf8')) as Message;
    } catch {
      return fail(res, 400, 'body is not JSON');
    }
    if (message.method === 'tools/call' && typeof message.params?.name === 'string') {
      if (!message.params.name.startsWith(PREFIX)) return fail(res, 404, `unknown tool ${message.params.name}`);
      message.params.name = message.params.name.slice(PREFIX.length);
    }
    relay(req, res, JSON.stringify(message), message);
  });
});
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`MCP_RELAY_READY http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}\n`);
});
