/**
 * An OAuth-protected MCP server for the `authRequired` tests: a gate on 127.0.0.1 in front of the
 * real HTTP conformance fixture that answers MCP requests like an MCP resource server (MCP
 * 2025-11-25, "Authorization"): without the expected bearer token a 401 whose `WWW-Authenticate`
 * names its protected resource metadata, served by the same gate at
 * `/.well-known/oauth-protected-resource/mcp` (RFC 9728 §3.1). With the token, requests pass
 * through to the fixture. `mode` changes what it answers, so a test can drive every transition.
 */
import { createServer } from 'node:http';
import { forwardTo, listenOnLoopback } from '../integration/harness/loopback-proxy.js';

export type GateMode =
  /** Every MCP request passes through. */
  | 'open'
  /** 401 `Bearer resource_metadata=…, scope=…` (`invalid_token` when a token was sent but not the right one). */
  | 'challenge'
  /** 403 `error="insufficient_scope"` with the scopes needed. */
  | 'insufficientScope'
  /** 401 naming metadata whose `resource` is another server's. */
  | 'foreignMetadata';

export interface AuthGate {
  /** The gated MCP URL (`…/mcp`). */
  readonly url: string;
  /** The metadata URL the challenges name. */
  readonly metadataUrl: string;
  mode: GateMode;
  /** Metadata documents served so far (each fetch counted). */
  readonly metadataFetches: number;
  /** Headers of the metadata fetches (to check no upstream credential went there). */
  readonly metadataHeaders: ReadonlyArray<Record<string, string | string[] | undefined>>;
  close(): Promise<void>;
}

export const GOOD_TOKEN = 'gate-token-that-works';

export async function startAuthGate(fixtureUrl: string): Promise<AuthGate> {
  const upstream = new URL(fixtureUrl);
  const metadataHeaders: Array<Record<string, string | string[] | undefined>> = [];
  let origin = '';
  const state = { mode: 'challenge' as GateMode };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/.well-known/oauth-protected-resource/mcp') {
        metadataHeaders.push({ ...req.headers });
        const resource = state.mode === 'foreignMetadata' ? 'http://127.0.0.1:9/elsewhere' : `${origin}/mcp`;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            resource,
            authorization_servers: [`${origin}/as`],
            scopes_supported: ['notes:read', 'notes:write'],
            bearer_methods_supported: ['header'],
            resource_name: 'Gated notes',
            // Not an RFC 9728 field: never carried into the list.
            x_internal: { huge: 'x'.repeat(1000) },
          }),
        );
        return;
      }
      const sent = req.headers.authorization;
      const metadata = `resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`;
      if (state.mode === 'open' || sent === `Bearer ${GOOD_TOKEN}`) {
        forwardTo(upstream, req, res, Buffer.concat(chunks));
        return;
      }
      if (state.mode === 'insufficientScope') {
        res.writeHead(403, { 'www-authenticate': `Bearer error="insufficient_scope", scope="notes:read notes:write", ${metadata}`, 'content-type': 'text/plain' });
        res.end('forbidden');
        return;
      }
      const error = sent === undefined ? '' : 'error="invalid_token", error_description="token expired at secret place", ';
      res.writeHead(401, { 'www-authenticate': `Bearer realm="notes", ${error}${metadata}, scope="notes:read"`, 'content-type': 'text/plain' });
      res.end('unauthorized');
    });
  });
  const listening = await listenOnLoopback(server, '/mcp');
  origin = new URL(listening.url).origin;
  return {
    url: listening.url,
    metadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
    get mode() {
      return state.mode;
    },
    set mode(mode: GateMode) {
      state.mode = mode;
    },
    get metadataFetches() {
      return metadataHeaders.length;
    },
    metadataHeaders,
    close: () => listening.close(),
  };
}
