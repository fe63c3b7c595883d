/**
 * Why an upstream connection could not be opened, in words an operator can act on. The gateway's
 * own messages are safe by construction (they name servers, fields and error codes, never a
 * command, an argument, a URL or a header value); a child's stderr lines reach here redacted.
 */
import { findCause, GatewayError, httpStatusOf, UpstreamError, UpstreamHttpError } from '../errors.js';
import { blockedAdvice } from '../net/blocked-advice.js';
import { safeReason } from './failure.js';

/** A transport that can say what went wrong with the thing it runs (a stdio child's exit). */
export interface ExplainsStartFailure {
  startFailure(): string | undefined;
}

function explains(transport: unknown): transport is ExplainsStartFailure {
  return typeof (transport as Partial<ExplainsStartFailure> | null)?.startFailure === 'function';
}

const isBlocked = (value: unknown): value is GatewayError => value instanceof GatewayError && value.code === 'UPSTREAM_BLOCKED';

/**
 * The reason shown for a failed connection to `server` (after `upstream "<server>": `):
 * - the transport's own account when it has one (a stdio command not found, a child that exited
 *   at start with its exit code and last stderr lines);
 * - an egress-guard refusal found anywhere along the cause chain, even under the SDK's
 *   handshake's error, with the setting that would allow it when one would;
 * - the gateway's own refusal to send a request (no token to be had for it) found there too;
 * - a network failure (refused, unknown host, timed out, reset, unreachable, a refused TLS
 *   certificate) or an HTTP status that says the URL is no MCP endpoint, named as such with what
 *   to check;
 * - otherwise `could not connect (CODE)`.
 */
export function describeStartFailure(server: string, error: unknown, transport: unknown): string {
  const own = explains(transport) ? transport.startFailure() : undefined;
  if (own !== undefined) return own;
  const blocked = findCause(error, isBlocked);
  if (blocked !== undefined) return blockedAdvice(server, blocked.message);
  // The gateway's own refusal on the way out (no credential for the upstream: credentials/).
  const refused = findCause(
    error,
    (value): value is UpstreamError => value instanceof UpstreamError && !(value instanceof UpstreamHttpError) && value.server === server && value.code === 'UPSTREAM_UNAVAILABLE',
  );
  if (refused !== undefined) return refused.message.slice(`upstream "${server}": `.length);
  const network = findCause(error, (value): value is { code: string } => typeof (value as { code?: unknown } | null)?.code === 'string' && NETWORK_FAILURES.has((value as { code: string }).code));
  if (network !== undefined) return NETWORK_FAILURES.get(network.code)!(server, network.code);
  const status = httpStatusOf(error);
  if (status === 404 || status === 405) {
    return `the URL answered HTTP ${status} to the MCP handshake: check servers.${server}.url (a server that speaks only HTTP+SSE needs "transport": "sse", or "auto" to try both)`;
  }
  return `could not connect (${safeReason(error)})`;
}

const urlOf = (server: string) => `servers.${server}.url`;

/** What a network error code at start means, and what to do about it. */
const NETWORK_FAILURES: ReadonlyMap<string, (server: string, code: string) => string> = new Map([
  ['ECONNREFUSED', (s: string) => `connection refused (ECONNREFUSED): nothing accepts connections at the host and port of ${urlOf(s)}; start the server, or correct the URL`],
  ['ENOTFOUND', (s: string) => `host not found (ENOTFOUND): the host name in ${urlOf(s)} does not resolve; check its spelling and DNS`],
  ['EAI_AGAIN', (s: string) => `host lookup failed (EAI_AGAIN): DNS did not answer for the host in ${urlOf(s)}; check the network, then it is retried`],
  ['ETIMEDOUT', (s: string, c: string) => `connection timed out (${c}): nothing answered at ${urlOf(s)} within servers.${s}.connectTimeoutMs; check firewalls and the port`],
  ['UND_ERR_CONNECT_TIMEOUT', (s: string, c: string) => `connection timed out (${c}): nothing answered at ${urlOf(s)} within servers.${s}.connectTimeoutMs; check firewalls and the port`],
  ['ECONNRESET', (s: string, c: string) => `connection reset (${c}): the server at ${urlOf(s)} hung up during the handshake; check the URL's scheme (http or https) and path`],
  ['UND_ERR_SOCKET', (s: string, c: string) => `connection reset (${c}): the server at ${urlOf(s)} hung up during the handshake; check the URL's scheme (http or https) and path`],
  ['EHOSTUNREACH', (s: string, c: string) => `host unreachable (${c}): no route to the host in ${urlOf(s)}; check the network`],
  ['ENETUNREACH', (s: string, c: string) => `network unreachable (${c}): no route to the host in ${urlOf(s)}; check the network`],
  ['DEPTH_ZERO_SELF_SIGNED_CERT', (s: string, c: string) => `TLS certificate refused (${c}): the server at ${urlOf(s)} presents a certificate Node does not trust; use a trusted certificate or NODE_EXTRA_CA_CERTS`],
  ['SELF_SIGNED_CERT_IN_CHAIN', (s: string, c: string) => `TLS certificate refused (${c}): the server at ${urlOf(s)} presents a certificate Node does not trust; use a trusted certificate or NODE_EXTRA_CA_CERTS`],
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', (s: string, c: string) => `TLS certificate refused (${c}): the server at ${urlOf(s)} presents a certificate Node does not trust; use a trusted certificate or NODE_EXTRA_CA_CERTS`],
  ['CERT_HAS_EXPIRED', (s: string, c: string) => `TLS certificate refused (${c}): the certificate of the server at ${urlOf(s)} has expired`],
  ['ERR_TLS_CERT_ALTNAME_INVALID', (s: string, c: string) => `TLS certificate refused (${c}): the certificate of the server at ${urlOf(s)} does not name its host`],
]);

/** What a child's start error code means, and what to do about it. */
export function spawnFailure(server: string, code: string): string {
  switch (code) {
    case 'ENOENT':
      return `command not found (ENOENT): install it, or give its full path in servers.${server}.command (a bare name is looked up on PATH)`;
    case 'EACCES':
      return `command is not executable (EACCES): check the file's permissions or servers.${server}.command`;
    default:
      return `command could not be started (${code})`;
  }
}

/** Most stderr lines quoted, and most characters of each, in a start failure. */
export const STDERR_TAIL_LINES = 5;
export const STDERR_TAIL_CHARS = 300;

/** A child that exited before its handshake: exit code or signal, and its last stderr lines. */
export function exitedAtStart(exit: { code: number | null; signal: string | null }, stderrTail: readonly string[]): string {
  const how = exit.code !== null ? `exited at start with exit code ${exit.code}` : `was killed at start by signal ${exit.signal ?? 'unknown'}`;
  if (stderrTail.length === 0) return `${how} (it wrote nothing to stderr)`;
  const lines = stderrTail.map((line) => `    | ${line}`).join('\n');
  return `${how}; its last stderr lines:\n${lines}`;
}

/** A stderr line fit to quote: control characters replaced, length bounded. */
export function quotableLine(line: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = line.replace(/[\u0000-\u0008\u000b-\u001f\u007f\u009b]/g, '?');
  return clean.length > STDERR_TAIL_CHARS ? `${clean.slice(0, STDERR_TAIL_CHARS)}…` : clean;
}
