/**
 * Why an upstream connection could not be opened, in words an operator can act on. The gateway's
 * own messages are safe by construction (they name servers, fields and error codes, never a
 * command, an argument, a URL or a header value); a child's stderr lines reach here redacted.
 */
import { findCause, GatewayError, UpstreamError } from '../errors.js';
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
 *   version-negotiation error, with the setting that would allow it when one would;
 * - the gateway's own refusal to send a request (no token to be had for it) found there too;
 * - otherwise `could not connect (CODE)`.
 */
export function describeStartFailure(server: string, error: unknown, transport: unknown): string {
  const own = explains(transport) ? transport.startFailure() : undefined;
  if (own !== undefined) return own;
  const blocked = findCause(error, isBlocked);
  if (blocked !== undefined) return blockedAdvice(server, blocked.message);
  // The gateway's own refusal on the way out (no credential for the upstream: credentials/).
  const refused = findCause(error, (value): value is UpstreamError => value instanceof UpstreamError && value.server === server && value.code === 'UPSTREAM_UNAVAILABLE');
  if (refused !== undefined) return refused.message.slice(`upstream "${server}": `.length);
  return `could not connect (${safeReason(error)})`;
}

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
