/**
 * MCP pagination of `tools/list` (specification, "Pagination"): the list is cut into pages of
 * `pageSize`; `nextCursor` is opaque to the client and carries the next offset and a fingerprint
 * of the list it was cut from, so it needs no state on the gateway (2026-era requests have no
 * session) and a cursor of a list that has changed since is refused rather than silently skipping
 * or repeating tools. An invalid cursor is -32602, as the specification asks.
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../../errors.js';

/** Longest cursor accepted: ours are about 30 characters. */
const MAX_CURSOR_LENGTH = 128;

export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | undefined;
}

/** A short fingerprint of a list of names: the same on every replica for the same list. */
export function listFingerprint(names: readonly string[]): string {
  const hash = createHash('sha256');
  for (const name of names) hash.update(name).update('\n');
  return hash.digest('base64url').slice(0, 16);
}

/**
 * The page of `items` that `cursor` points at (the first page when undefined). `fingerprint`
 * identifies `items`; `pageSize` undefined means one page.
 */
export function pageOf<T>(items: readonly T[], fingerprint: () => string, pageSize: number | undefined, cursor: unknown): Page<T> {
  if (cursor === undefined && (pageSize === undefined || items.length <= pageSize)) return { items, nextCursor: undefined };
  if (pageSize === undefined) throw invalidCursor('this gateway does not paginate tools/list; list without a cursor');
  const print = fingerprint();
  const offset = cursor === undefined ? 0 : offsetOf(cursor, print, items.length);
  const end = offset + pageSize;
  return { items: items.slice(offset, end), nextCursor: end < items.length ? `${end.toString(36)}.${print}` : undefined };
}

function offsetOf(cursor: unknown, fingerprint: string, length: number): number {
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH) throw invalidCursor('invalid cursor');
  const match = /^([0-9a-z]{1,8})\.([A-Za-z0-9_-]{16})$/.exec(cursor);
  if (match === null) throw invalidCursor('invalid cursor');
  if (match[2] !== fingerprint) throw invalidCursor('the tool list changed since this cursor was issued; list again without a cursor');
  const offset = Number.parseInt(match[1] as string, 36);
  if (offset <= 0 || offset >= length) throw invalidCursor('invalid cursor');
  return offset;
}

function invalidCursor(message: string): GatewayError {
  return new GatewayError('INVALID_PARAMS', `tools/list: ${message}`);
}
