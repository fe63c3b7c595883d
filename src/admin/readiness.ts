/**
 * The `/readyz` answer for one caller: the gateway's readiness (every required server up), its
 * canonical MCP URL, and the servers with their states — only those the caller may see. A load
 * balancer's probe reads the status code and `status`, which never depend on who asks; the
 * server list is the part that names things, so a caller the policy's access rules narrow sees
 * only the servers its profile shows (`serverParts`, as every other listing of servers judges it),
 * while an admin (the policy's `admins`), a caller nothing is hidden from, and every caller of a
 * gateway without auth (loopback, or acknowledged open) see them all. Pure.
 */
import { seesAll, showsServer, type AccessProfile } from '../policy/access-policy.js';
import type { ServerStatus } from '../upstream/registry.js';

export interface ReadinessInput {
  readonly ready: boolean;
  readonly url: string | undefined;
  readonly servers: readonly ServerStatus[];
  /** The caller's access profile; undefined: nothing is hidden from it. */
  readonly access: AccessProfile | undefined;
  /** The caller is one of the policy's `admins`: it sees every server whatever the access rules say. */
  readonly admin: boolean;
}

export interface Readiness {
  readonly status: 200 | 503;
  readonly body: { status: 'ready' | 'not ready'; url?: string; servers: readonly ServerStatus[] };
}

export function readiness(input: ReadinessInput): Readiness {
  const { access } = input;
  const servers = input.admin || seesAll(access) ? input.servers : input.servers.filter((s) => showsServer(access, s.server));
  return {
    status: input.ready ? 200 : 503,
    body: { status: input.ready ? 'ready' : 'not ready', ...(input.url === undefined ? {} : { url: input.url }), servers },
  };
}
