/**
 * The session record replicas share (hash `<root>session:<id>`): enough to rebuild a 2025-era
 * session on another replica: who opened it, through which endpoint, and the client's
 * `initialize` params (protocol version, capabilities, clientInfo), which are replayed into a
 * fresh transport on takeover. Pure encoding; Redis I/O lives in `cluster.ts`.
 */

export interface SessionRecord {
  readonly sessionId: string;
  /** Replica that created or last took over the session (the lease says whether it is alive). */
  readonly owner: string;
  /** Which endpoint serves it (`aggregate`, `servers/<name>`): a session never changes endpoint. */
  readonly endpoint: string;
  /** The authenticated principal that opened it; absent when auth is off. */
  readonly principal: string | undefined;
  /** The protocol version the client asked for (negotiation is deterministic: replay gives the same). */
  readonly protocolVersion: string;
  /** The client's `initialize` params, verbatim. */
  readonly initialize: Readonly<Record<string, unknown>>;
  readonly createdAt: number;
}

export function encodeRecord(record: SessionRecord): Record<string, string> {
  const hash: Record<string, string> = {
    owner: record.owner,
    endpoint: record.endpoint,
    protocolVersion: record.protocolVersion,
    initialize: JSON.stringify(record.initialize),
    createdAt: String(record.createdAt),
  };
  if (record.principal !== undefined) hash.principal = record.principal;
  return hash;
}

/** The record in `hash`, or undefined when it is absent or not one this code wrote. */
export function decodeRecord(sessionId: string, hash: Readonly<Record<string, string>>): SessionRecord | undefined {
  const { owner, endpoint, protocolVersion, initialize, createdAt } = hash;
  if (owner === undefined || endpoint === undefined || protocolVersion === undefined || initialize === undefined) return undefined;
  let params: unknown;
  try {
    params = JSON.parse(initialize);
  } catch {
    return undefined;
  }
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  return {
    sessionId,
    owner,
    endpoint,
    principal: hash.principal,
    protocolVersion,
    initialize: params as Record<string, unknown>,
    createdAt: Number(createdAt ?? 0),
  };
}

/** The `params` of an `initialize` request body, if it is one. */
export function initializeParamsOf(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const message = body as { method?: unknown; params?: unknown };
  if (message.method !== 'initialize') return undefined;
  const params = message.params;
  return typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : undefined;
}
