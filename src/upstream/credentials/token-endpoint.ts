/**
 * One request to an OAuth token endpoint (RFC 6749 §3.2) by the gateway's own client, shared by
 * the credential modes that get tokens from an authorization server (client-credentials.ts,
 * token-exchange.ts): the form POSTed through the entry's egress-guarded fetch with
 * `client_secret_basic` (§2.3.1), the answer read as a Bearer access token (RFC 6749 §5.1) with
 * its lifetime. A failure is an `UPSTREAM_UNAVAILABLE` naming the server and only the HTTP status
 * or the OAuth error code (§5.2): never the secret, a token, or the endpoint's description text.
 */
import { UpstreamError } from '../../errors.js';
import type { GuardedFetch } from '../../net/guarded-fetch.js';

export interface TokenRequest {
  server: string;
  tokenUrl: string;
  clientId: string;
  /** The client secret, read from the environment by the caller just now. */
  secret: string;
  /** The grant's parameters (`grant_type` and the rest). */
  form: URLSearchParams;
  fetch: GuardedFetch;
}

export interface IssuedToken {
  readonly token: string;
  /** From `expires_in`; undefined when the endpoint gave none. */
  readonly lifetimeMs: number | undefined;
}

const FETCH_TIMEOUT_MS = 10_000;
const MAX_TOKEN_LENGTH = 16 * 1024;

/** The error of a token that could not be had, naming the server and `why`. */
export function tokenFailure(server: string, why: string): UpstreamError {
  return new UpstreamError('UPSTREAM_UNAVAILABLE', server, `could not get an access token for the upstream: ${why}`);
}

export async function requestToken(request: TokenRequest): Promise<IssuedToken> {
  const fail = (why: string) => tokenFailure(request.server, why);
  let response: Response;
  try {
    response = await request.fetch(request.tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        // RFC 6749 §2.3.1: client_secret_basic, both parts form-encoded first.
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(request.clientId)}:${encodeURIComponent(request.secret)}`).toString('base64')}`,
      },
      body: request.form.toString(),
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
  // RFC 8693 §2.2.1 answers `token_type` "N_A" for a token that is not an access token: not usable either.
  if (typeof answer.token_type === 'string' && answer.token_type.toLowerCase() !== 'bearer') throw fail('the token endpoint answered a token type other than Bearer');
  const lifetimeMs = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in * 1000 : undefined;
  return { token, lifetimeMs };
}
