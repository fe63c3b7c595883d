/**
 * The gateway's own OAuth client for one upstream (`upstreamAuth.kind: "clientCredentials"`):
 * an access token from the upstream's authorization server by the client credentials grant
 * (RFC 6749 §4.4, with the RFC 8707 `resource` of the upstream), sent as the upstream's
 * `Authorization`. The client's own token is never forwarded, in any mode.
 *
 * One token at a time per upstream: fetched on first use, reused until shortly before it expires
 * (refreshed ahead, one fetch however many requests wait), dropped when the upstream answers 401.
 * The token endpoint is dialled through the egress guard under the entry's own
 * `allowPrivateNetwork`; the client secret is read from the environment when a token is fetched
 * (a rotated secret is picked up) and never logged; failures name the server and the HTTP status
 * or OAuth error code only.
 */
import { UpstreamError } from '../../errors.js';
import type { GuardedFetch } from '../../net/guarded-fetch.js';

export interface ClientCredentialsConfig {
  tokenUrl: string;
  clientId: string;
  clientSecretEnv: string;
  scope?: string | undefined;
  /** The RFC 8707 resource asked for; default: the upstream's URL. */
  resource?: string | undefined;
}

export interface UpstreamTokenSource {
  /** A token to send now. Rejects with `UPSTREAM_UNAVAILABLE` naming the server when none can be had. */
  token(): Promise<string>;
  /** The upstream refused the token (401): the next request fetches a new one. */
  invalidate(token: string): void;
}

/** Tokens are renewed this long before they expire. */
const REFRESH_AHEAD_MS = 60_000;
/** A token with no `expires_in` is reused this long. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;
const FETCH_TIMEOUT_MS = 10_000;
const MAX_TOKEN_LENGTH = 16 * 1024;
/** After a refused token is dropped, the next refusal within this long keeps its token. */
const REFETCH_COOLDOWN_MS = 5_000;

export interface ClientCredentialsOptions {
  server: string;
  upstreamUrl: string;
  config: ClientCredentialsConfig;
  readEnv(name: string): string | undefined;
  fetch: GuardedFetch;
  now?: () => number;
}

export function clientCredentialsSource(options: ClientCredentialsOptions): UpstreamTokenSource {
  const { server, config } = options;
  const now = options.now ?? Date.now;
  let current: { token: string; expiresAt: number } | undefined;
  let lastDropped = Number.NEGATIVE_INFINITY;
  let pending: Promise<string> | undefined;

  const fail = (why: string) => new UpstreamError('UPSTREAM_UNAVAILABLE', server, `could not get an access token for the upstream: ${why}`);

  async function fetchToken(): Promise<string> {
    const secret = options.readEnv(config.clientSecretEnv);
    if (secret === undefined || secret === '') throw fail(`${config.clientSecretEnv} is not set`);
    const body = new URLSearchParams({ grant_type: 'client_credentials', resource: config.resource ?? options.upstreamUrl });
    if (config.scope !== undefined) body.set('scope', config.scope);
    let response: Response;
    try {
      response = await options.fetch(config.tokenUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          // RFC 6749 §2.3.1: client_secret_basic, both parts form-encoded first.
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(config.clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
        },
        body: body.toString(),
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch {
      throw fail('the token endpoint could not be reached');
    }
    let answer: { access_token?: unknown; token_type?: unknown; expires_in?: unknown; error?: unknown };
    try {
      answer = (await response.json()) as typeof answer;
    } catch {
      throw fail(`the token endpoint answered HTTP ${response.status} without JSON`);
    }
    if (!response.ok) {
      const code = typeof answer.error === 'string' && /^[\x20-\x7e]{1,64}$/.test(answer.error) ? answer.error : 'unknown';
      throw fail(`the token endpoint answered HTTP ${response.status} (${code})`);
    }
    const token = answer.access_token;
    if (typeof token !== 'string' || token === '' || token.length > MAX_TOKEN_LENGTH || /[\s"\\]/.test(token)) throw fail('the token endpoint answered no usable access_token');
    if (typeof answer.token_type === 'string' && answer.token_type.toLowerCase() !== 'bearer') throw fail('the token endpoint answered a token type other than Bearer');
    const lifetime = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in * 1000 : DEFAULT_LIFETIME_MS;
    current = { token, expiresAt: now() + lifetime };
    return token;
  }

  return {
    token() {
      const at = now();
      if (current !== undefined && current.expiresAt - REFRESH_AHEAD_MS > at) return Promise.resolve(current.token);
      pending ??= fetchToken().finally(() => {
        pending = undefined;
      });
      // Close to expiry but still valid: renewed in the background, the current one serves meanwhile.
      if (current !== undefined && current.expiresAt > at) {
        pending.catch(() => undefined);
        return Promise.resolve(current.token);
      }
      return pending;
    },
    invalidate(token) {
      // Dropped at most once per cooldown: an upstream that refuses every token must not turn each
      // request into a round trip to the token endpoint.
      if (current?.token !== token || now() - lastDropped < REFETCH_COOLDOWN_MS) return;
      lastDropped = now();
      current = undefined;
    },
  };
}
