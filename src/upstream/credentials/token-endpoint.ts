/**
 * One request to an OAuth token endpoint (RFC 6749 §3.2) by the gateway's own client, shared by
 * the credential modes that get tokens from an authorization server (client-credentials.ts,
 * token-exchange.ts): the form POSTed through the entry's egress-guarded fetch with
 * `client_secret_basic` (§2.3.1), the answer read as a Bearer access token (RFC 6749 §5.1) with
 * its lifetime. A failure is an `UPSTREAM_UNAVAILABLE` naming the server and only the HTTP status
 * or the OAuth error code (§5.2): never the secret, a token, or the endpoint's description text.
 */
import { UpstreamError } from '../../errors.js';
import { B64TOKEN, MAX_UPSTREAM_TOKEN_LENGTH } from '../../net/bearer-token.js';
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
  /**
   * RFC 8693 §2.2.1: the `issued_token_type` values accepted when the answer names one (token
   * exchange); absent: not checked (the grants of RFC 6749 have no such field).
   */
  issuedTokenTypes?: ReadonlySet<string>;
}

export interface IssuedToken {
  readonly token: string;
  /** From `expires_in`; undefined when the endpoint gave none. */
  readonly lifetimeMs: number | undefined;
}

const FETCH_TIMEOUT_MS = 10_000;

/** The error of a token that could not be had, naming the server and `why`. */
export function tokenFailure(server: string, why: string): UpstreamError {
  return new UpstreamError('UPSTREAM_UNAVAILABLE', server, `could not get an access token for the upstream: ${why}`);
}

/**
 * The client secret from the environment variable `name`, read now so a rotated secret is picked
 * up; unset or empty is a token failure naming the variable (never its value).
 */
export function clientSecret(server: string, name: string, readEnv: (name: string) => string | undefined): string {
  const secret = readEnv(name);
  if (secret === undefined || secret === '') throw tokenFailure(server, `${name} is not set`);
  return secret;
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
  let answer: { access_token?: unknown; token_type?: unknown; expires_in?: unknown; issued_token_type?: unknown; error?: unknown };
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
  if (typeof token !== 'string' || token.length > MAX_UPSTREAM_TOKEN_LENGTH || !B64TOKEN.test(token)) throw fail('the token endpoint answered no usable access_token');
  // RFC 6749 §5.1: token_type is required; RFC 8693 §2.2.1 answers "N_A" for a token that is not an access token.
  if (typeof answer.token_type !== 'string' || answer.token_type.toLowerCase() !== 'bearer') throw fail('the token endpoint answered a token type other than Bearer');
  const issuedType = answer.issued_token_type;
  if (request.issuedTokenTypes !== undefined && issuedType !== undefined && (typeof issuedType !== 'string' || !request.issuedTokenTypes.has(issuedType))) {
    throw fail('the token endpoint issued a token that is not an access token (issued_token_type)');
  }
  // A number, or the numeric string some servers send; anything else is no lifetime (the default).
  const seconds = typeof answer.expires_in === 'string' && /^-?\d+$/.test(answer.expires_in) ? Number(answer.expires_in) : answer.expires_in;
  if (typeof seconds === 'number' && !(seconds > 0)) throw fail('the token endpoint answered a token that has already expired (expires_in)');
  const lifetimeMs = typeof seconds === 'number' && Number.isFinite(seconds) ? seconds * 1000 : undefined;
  return { token, lifetimeMs };
}
