/**
 * How a session id appears in logs: a short keyed hash, never the id itself.
 *
 * Why: without inbound authentication the `Mcp-Session-Id` is the session's only credential
 * (MCP 2025-11-25, Transports "Session Management" and Security Best Practices "Session
 * Hijacking"): whoever reads it from a log can resume the session's streams and call its tools.
 * An HMAC-SHA-256 under a key drawn at random when the process starts, cut to 12 hex characters,
 * keeps lines of one session correlatable within the process while telling a log reader nothing
 * they could present back (the key never leaves memory; a plain hash of a guessable id could be
 * matched offline, a keyed one cannot). Tags of the same id differ between processes and replicas.
 *
 * Every log line or error field that names a session goes through {@link sessionTag}.
 */
import { createHmac, randomBytes } from 'node:crypto';

const KEY = randomBytes(32);
const TAG_HEX_CHARS = 12;

/** The log tag of a session id (`undefined` stays `undefined`: a request without a session). */
export function sessionTag(sessionId: string): string;
export function sessionTag(sessionId: string | undefined): string | undefined;
export function sessionTag(sessionId: string | undefined): string | undefined {
  if (sessionId === undefined) return undefined;
  return createHmac('sha256', KEY).update(sessionId).digest('hex').slice(0, TAG_HEX_CHARS);
}
