/**
 * The Redis keys replicas share, all under one root (default `portcullis:`, `eventStore.keyPrefix`
 * in config; tests use a unique root each). The event store's streams live under `<root>events:`.
 */

export interface ClusterKeys {
  /** Prefix handed to the event store: its stream for session `id` is `<events><id>`. */
  readonly events: string;
  /** Hash: the session record (owner, principal, initialize params…). */
  session(id: string): string;
  /** String with a PX lease: the replica that owns the session now. */
  owner(id: string): string;
  /** Hash: request id (JSON) → SSE stream id, for requests accepted and not yet answered. */
  inflight(id: string): string;
  /** String with a PX lease: a live replica's advertised base URL. */
  replica(replicaId: string): string;
  /** Hash with a PX expiry: one rate-limit bucket, by the digest of its name. */
  rate(digest: string): string;
  /** List with a PX expiry: the tools one 2026-era caller loaded, by the digest of the caller. */
  loaded(digest: string): string;
}

export const DEFAULT_KEY_ROOT = 'portcullis:';

export function clusterKeys(root: string = DEFAULT_KEY_ROOT): ClusterKeys {
  return {
    events: `${root}events:`,
    session: (id) => `${root}session:${id}`,
    owner: (id) => `${root}owner:${id}`,
    inflight: (id) => `${root}inflight:${id}`,
    replica: (replicaId) => `${root}replica:${replicaId}`,
    rate: (digest) => `${root}rate:${digest}`,
    loaded: (digest) => `${root}loaded:${digest}`,
  };
}
