/**
 * An authorization server's metadata, discovered from its issuer identifier the way the MCP
 * authorization spec lists it ("Authorization Server Metadata Discovery"): OAuth 2.0
 * Authorization Server Metadata (RFC 8414 §3.1, path inserted after the host), then OpenID
 * Connect Discovery with the path inserted, then appended. Fetched through the egress guard, read
 * bounded, and accepted only when its `issuer` is exactly the configured one (RFC 8414 §3.3: a
 * document naming another issuer is an impersonation attempt) and its `jwks_uri` passes the same
 * URL rule the issuer did.
 *
 * What the gateway needs of it is the key set; a failed discovery is retried at most once per
 * cooldown, so a stream of tokens cannot make the gateway hammer a broken IdP.
 */
import { checkEgressUrl } from '../../../policy/upstream-url.js';
import type { JwksFetch } from '../token-verifier.js';

export interface IssuerMetadata {
  issuer: string;
  jwksUri: string;
}

/** The well-known URLs to try for `issuer`, in the order the MCP authorization spec gives. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  const origin = url.origin;
  if (path === '') return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/** Judge one metadata document; a string is the (URL-free) reason it is refused. */
export function readIssuerMetadata(issuer: string, document: unknown, plaintextBeyondLoopback: boolean): IssuerMetadata | string {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return 'metadata is not a JSON object';
  const record = document as Record<string, unknown>;
  if (record.issuer !== issuer) return 'metadata names another issuer';
  const jwksUri = record.jwks_uri;
  if (typeof jwksUri !== 'string' || jwksUri === '') return 'metadata has no jwks_uri';
  const checked = checkEgressUrl(jwksUri, { protocol: 'http', plaintextBeyondLoopback });
  if (!checked.ok) return `metadata's jwks_uri ${checked.message}`;
  return { issuer, jwksUri };
}

export interface IssuerDiscoveryOptions {
  issuer: string;
  fetch: JwksFetch;
  plaintextBeyondLoopback: boolean;
  /** Least time between two failed discoveries; default 30 s. */
  cooldownMs?: number;
  now?: () => number;
}

const DEFAULT_COOLDOWN_MS = 30_000;
const DISCOVERY_TIMEOUT_MS = 5_000;

export interface IssuerDiscovery {
  /** The metadata, discovered once; rejects with a URL-free reason while the issuer cannot be read. */
  get(): Promise<IssuerMetadata>;
}

export function createIssuerDiscovery(options: IssuerDiscoveryOptions): IssuerDiscovery {
  const cooldownMs = options.cooldownMs ?? DEFAULT_COOLDOWN_MS;
  const now = options.now ?? Date.now;
  let found: IssuerMetadata | undefined;
  let pending: Promise<IssuerMetadata> | undefined;
  let failedAt = -Infinity;
  let lastReason = 'not discovered yet';

  async function discover(): Promise<IssuerMetadata> {
    let reason = 'no metadata document found';
    for (const url of metadataUrls(options.issuer)) {
      let response: Response;
      try {
        response = await options.fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
      } catch {
        reason = 'metadata fetch failed';
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        reason = `metadata answered HTTP ${response.status}`;
        continue;
      }
      let document: unknown;
      try {
        document = await response.json();
      } catch {
        reason = 'metadata is not JSON';
        continue;
      }
      const read = readIssuerMetadata(options.issuer, document, options.plaintextBeyondLoopback);
      if (typeof read !== 'string') return read;
      reason = read;
    }
    throw new Error(reason);
  }

  return {
    get() {
      if (found !== undefined) return Promise.resolve(found);
      if (pending !== undefined) return pending;
      if (now() - failedAt < cooldownMs) return Promise.reject(new Error(lastReason));
      pending = discover().then(
        (metadata) => {
          found = metadata;
          pending = undefined;
          return metadata;
        },
        (error: unknown) => {
          failedAt = now();
          lastReason = error instanceof Error ? error.message : 'metadata discovery failed';
          pending = undefined;
          throw new Error(lastReason);
        },
      );
      return pending;
    },
  };
}
