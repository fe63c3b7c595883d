/**
 * The `cluster` block: scale-out across replicas sharing the redis store (docs/deployment.md,
 * "Scaling out with Docker Compose"), and the checks it needs of the rest of the config.
 */
import { z } from 'zod';

/** Present: this gateway is one replica of a cluster (needs `eventStore.kind: "redis"`). */
export const clusterSchema = z.strictObject({
  /** This replica's id in Redis (default: random per process). */
  replicaId: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).optional(),
  /** Base URL other replicas forward to (default: `http://<bound address>:<port>`). */
  advertiseUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** Ownership lease: a replica silent this long has its sessions taken over. */
  leaseMs: z.number().int().min(500).max(600_000).default(10_000),
  /**
   * Let forwarding reach peers on loopback and private addresses (and over plain `http:`
   * beyond loopback, never to a public address). Applies to every peer URL this replica dials.
   */
  allowPrivateNetwork: z.boolean().default(false),
});

/** What a cluster needs of the rest of the config; nothing when there is no `cluster` block. */
export function checkCluster(
  config: { cluster?: unknown; eventStore: { kind: string } },
  ctx: { addIssue(issue: { code: 'custom'; path: string[]; message: string }): void },
): void {
  if (config.cluster === undefined) return;
  if (config.eventStore.kind !== 'redis') {
    ctx.addIssue({ code: 'custom', path: ['cluster'], message: 'needs eventStore.kind "redis" (replicas share sessions through it)' });
  }
}
