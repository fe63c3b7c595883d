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
/**
 * Tags of recent ids: every call logs its session twice (access line, rpc line), and an HMAC
 * costs more than the rest of a log line. Bounded in count and bytes: only ids of a plausible
 * length are kept (a client may send any header), and the map is emptied when full.
 */
const MAX_REMEMBERED = 4096;
const MAX_REMEMBERED_ID_CHARS = 128;
const remembered = new Map<string, string>();

/** The log tag of a session id (`undefined` stays `undefined`: a request without a session). */
export function sessionTag(sessionId: string): string;
export function sessionTag(sessionId: string | undefined): string | undefined;
export function sessionTag(sessionId: string | undefined): string | undefined {
  if (sessionId === undefined) return undefined;
  const known = remembered.get(sessionId);
  if (known !== undefined) return known;
  const tag = createHmac('sha256', KEY).update(sessionId).digest('hex').slice(0, TAG_HEX_CHARS);
  if (sessionId.length <= MAX_REMEMBERED_ID_CHARS) {
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(sessionId, tag);
  }
  return tag;
}
