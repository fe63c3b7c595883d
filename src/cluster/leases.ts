/**
 * Ownership leases in Redis. A replica owns a session while `<root>owner:<id>` holds its id; the
 * key expires `leaseMs` after the last renewal, so a dead replica's sessions become claimable
 * (SET NX) by whoever sees them next. A live replica announces its base URL under
 * `<root>replica:<replicaId>` with the same lease. One heartbeat renews everything a replica
 * holds in one pipeline; a renewal that finds another owner reports the session lost (this
 * replica was presumed dead and must let go, never steal it back); one that finds no owner at all
 * takes the lease again.
 */
import type { ClusterRedis } from './cluster-redis.js';
import type { ClusterKeys } from './cluster-keys.js';

/**
 * Renews the lease (KEYS[1]) if still ours, and the record and in-flight TTLs with it. A lease
 * that is simply gone (Redis restarted, or was unreachable for longer than a lease) while no
 * other replica took the session is re-taken: only another owner means this replica must let go.
 */
const RENEW = `local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] or owner == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
  return 1
end
return 0`;

/** Deletes the lease (KEYS[1]) only if it is still ours. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export interface LeaseOptions {
  client: ClusterRedis;
  keys: ClusterKeys;
  replicaId: string;
  leaseMs: number;
  /** TTL of a session's record and in-flight hash while it is owned (the idle timeout). */
  recordTtlMs: number;
}

export class Leases {
  constructor(private readonly options: LeaseOptions) {}

  /** Takes the lease of a session nobody holds; false when another replica got it first. */
  async claim(sessionId: string): Promise<boolean> {
    const { client, keys, replicaId, leaseMs } = this.options;
    const set = await client.set(keys.owner(sessionId), replicaId, { condition: 'NX', expiration: { type: 'PX', value: leaseMs } });
    return set === 'OK';
  }

  /** The replica holding the session's lease, or null when none does (expired or never set). */
  async ownerOf(sessionId: string): Promise<string | null> {
    return this.options.client.get(this.options.keys.owner(sessionId));
  }

  /** A live replica's advertised base URL, or null when its lease expired. */
  async urlOf(replicaId: string): Promise<string | null> {
    return this.options.client.get(this.options.keys.replica(replicaId));
  }

  /** Renews this replica's announcement and every lease in `sessionIds`; resolves with those lost. */
  async renew(advertiseUrl: string, sessionIds: readonly string[]): Promise<string[]> {
    const { client, keys, replicaId, leaseMs, recordTtlMs } = this.options;
    const pipeline = client.multi();
    pipeline.set(keys.replica(replicaId), advertiseUrl, { expiration: { type: 'PX', value: leaseMs } });
    for (const id of sessionIds) {
      pipeline.eval(RENEW, {
        keys: [keys.owner(id), keys.session(id), keys.inflight(id)],
        arguments: [replicaId, String(leaseMs), String(recordTtlMs)],
      });
    }
    const replies = await pipeline.execAsPipeline();
    return sessionIds.filter((_, index) => (replies[index + 1] as unknown) !== 1);
  }

  /** Gives up leases (graceful shutdown) so another replica takes the sessions over at once. */
  async release(sessionIds: readonly string[]): Promise<void> {
    const { client, keys, replicaId } = this.options;
    const pipeline = client.multi();
    pipeline.del(keys.replica(replicaId));
    for (const id of sessionIds) pipeline.eval(RELEASE, { keys: [keys.owner(id)], arguments: [replicaId] });
    await pipeline.execAsPipeline();
  }
}
