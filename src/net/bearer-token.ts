/**
 * The syntax limits of a bearer token (RFC 6750), one definition for every place that reads one:
 * the client's `Authorization` header (inbound/auth), a token an authorization server issues to the
 * gateway (upstream/credentials/token-endpoint.ts), and a token a user gives for a perUser upstream
 * (customizations/authenticate-route.ts, upstream/credentials/user-tokens.ts).
 */

/**
 * RFC 6750 §2.1 b64token: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`: all an
 * `Authorization: Bearer` value may hold (no whitespace, CR, LF, comma or quote). ASCII only, so a
 * token's length in characters is its length in bytes.
 */
export const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** A client's bearer token longer than this is refused unread; real access tokens are a few kilobytes at most. */
export const MAX_CLIENT_TOKEN_LENGTH = 8192;

/**
 * The longest token the gateway sends an upstream: one issued to it by an authorization server or
 * given by a user for a perUser upstream (a JWT with many claims fits).
 */
export const MAX_UPSTREAM_TOKEN_LENGTH = 16 * 1024;
