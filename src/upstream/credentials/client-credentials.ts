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
import type { GuardedFetch } from '../../net/guarded-fetch.js';
import { clientSecret, requestToken } from './token-endpoint.js';
import type { UpstreamTokenSource } from './token-source.js';

export interface ClientCredentialsConfig {
  tokenUrl: string;
  clientId: string;
  clientSecretEnv: string;
  scope?: string | undefined;
  /** The RFC 8707 resource asked for; default: the upstream's URL. */
  resource?: string | undefined;
}

/** Tokens are renewed this long before they expire. */
export const REFRESH_AHEAD_MS = 60_000;
/** A token with no `expires_in` is reused this long. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;
/** After a refused token is dropped, the next refusal within this long keeps its token. */
export const REFETCH_COOLDOWN_MS = 5_000;

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

  async function fetchToken(): Promise<string> {
    const secret = clientSecret(server, config.clientSecretEnv, options.readEnv);
    const form = new URLSearchParams({ grant_type: 'client_credentials', resource: config.resource ?? options.upstreamUrl });
    if (config.scope !== undefined) form.set('scope', config.scope);
    const issued = await requestToken({ server, tokenUrl: config.tokenUrl, clientId: config.clientId, secret, form, fetch: options.fetch });
    current = { token: issued.token, expiresAt: now() + (issued.lifetimeMs ?? DEFAULT_LIFETIME_MS) };
    return issued.token;
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
