/**
 * An MCP server on 127.0.0.1 that demands each user's own bearer token, for the `perUser` tests:
 * a real SDK server (both eras) behind a gate that answers a request without an accepted token
 * with 401 `WWW-Authenticate: Bearer resource_metadata="…", scope="notes:read"` (MCP 2025-11-25,
 * "Authorization"; `error="invalid_token"` when a token was sent) and serves that RFC 9728
 * document itself. Tool `whoami` answers which user the request's token belongs to. A token can
 * be revoked, and every `Authorization` the gate saw is kept, so a test can tell what reached it.
 * Tool `hold` answers only once the test releases it, so a test can act while a call is in flight.
 * Open GET streams can be cut, so a test can make the client's own stream meet a revoked token first.
 */
import { createServer, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/server';
import { serveBothEras } from '../../demo/lib/serve-both-eras.js';
import { forwardTo, listenOnLoopback } from '../integration/harness/loopback-proxy.js';

export const USERS: Readonly<Record<string, string>> = { 'user-a-token': 'user A', 'user-b-token': 'user B' };

export interface PerUserUpstream {
  /** The gated MCP URL (`…/mcp`). */
  readonly url: string;
  readonly origin: string;
  /** Every `Authorization` header an MCP request carried (undefined for none), in order. */
  readonly seen: ReadonlyArray<string | undefined>;
  /** From now on `token` is refused (401 invalid_token). */
  revoke(token: string): void;
  /** Cuts every open GET stream (a client's standalone stream): its client reconnects, with its token. */
  cutStreams(): void;
  /** GET requests the gate has answered or forwarded so far. */
  readonly streamRequests: number;
  /** Resolves once a `hold` call reached the upstream. */
  holding(): Promise<void>;
  /** Lets every `hold` call answer. */
  release(): void;
  close(): Promise<void>;
}

interface Hold {
  entered(): void;
  readonly released: Promise<void>;
}

function userServer(hold: Hold): McpServer {
  const server = new McpServer({ name: 'per-user-notes', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('whoami', { description: 'Says which user the request was made for' }, (ctx) => {
    const sent = ctx.http?.req?.headers.get('authorization') ?? '';
    const user = USERS[sent.replace(/^Bearer /, '')] ?? 'nobody';
    return { content: [{ type: 'text' as const, text: user }] };
  });
  server.registerTool('hold', { description: 'Answers once the test releases it' }, async () => {
    hold.entered();
    await hold.released;
    return { content: [{ type: 'text' as const, text: 'released' }] };
  });
  return server;
}

export async function startPerUserUpstream(): Promise<PerUserUpstream> {
  let entered!: () => void;
  const holding = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const inner = await serveBothEras({ factory: () => userServer({ entered, released }) });
  const target = new URL(inner.url);
  const revoked = new Set<string>();
  const seen: Array<string | undefined> = [];
  const streams = new Set<ServerResponse>();
  let streamRequests = 0;
  let origin = '';
  const gate = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/.well-known/oauth-protected-resource/mcp') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [`${origin}/as`], scopes_supported: ['notes:read'], resource_name: 'Per-user notes' }));
        return;
      }
      const sent = req.headers.authorization;
      seen.push(sent);
      if (req.method === 'GET') {
        streamRequests += 1;
        streams.add(res);
        res.on('close', () => streams.delete(res));
      }
      const token = sent?.startsWith('Bearer ') ? sent.slice('Bearer '.length) : undefined;
      if (token !== undefined && USERS[token] !== undefined && !revoked.has(token)) {
        forwardTo(target, req, res, Buffer.concat(chunks));
        return;
      }
      const error = sent === undefined ? '' : 'error="invalid_token", ';
      res.writeHead(401, { 'www-authenticate': `Bearer ${error}resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="notes:read"`, 'content-type': 'text/plain' });
      res.end('unauthorized');
    });
  });
  const listening = await listenOnLoopback(gate, '/mcp');
  origin = new URL(listening.url).origin;
  return {
    url: listening.url,
    origin,
    seen,
    revoke: (token) => revoked.add(token),
    cutStreams: () => {
      for (const stream of streams) stream.destroy();
    },
    get streamRequests() {
      return streamRequests;
    },
    holding: () => holding,
    release,
    async close() {
      release();
      await listening.close();
      await inner.close();
    },
  };
}
