/**
 * The audit line of every refusal answered at the HTTP edge (docs/operations.md, "Audit log"):
 * Host and Origin refusals, failed authentication, and the session and rate limits that answer
 * before any JSON-RPC is dispatched. It reads the gateway code `errorResponse` recorded for the
 * response (errors.ts), never the body. Refusals inside a JSON-RPC exchange are audited by the
 * request's own observation (request-observers.ts).
 */
import type { MiddlewareHandler } from 'hono';
import { refusalOf } from '../errors.js';
import type { AuditLog } from '../observability/audit-log.js';
import { auditDecision, isRefusalCode } from '../observability/audit-decision.js';
import { sessionTag } from '../observability/session-tag.js';

export interface AuditRefusalsOptions {
  audit: AuditLog;
  /** The MCP path (`/mcp`); `''` when it is `/`. */
  base: string;
  /** Configured side-channel names: only these appear as `server:<name>` (a path is client input). */
  sideChannels: Pick<ReadonlySet<string>, 'has'>;
  /** Whether an agent endpoint of that name exists: only these appear as `agent:<name>`. */
  hasAgent?: (name: string) => boolean;
  /** The principal authentication found, when it ran and succeeded. */
  principalOf(c: Parameters<MiddlewareHandler>[0]): string | undefined;
}

const TRANSPORT_TAILS = new Set(['', '/sse', '/messages']);

/** The endpoint a path belongs to, as audit lines name it. */
export function endpointOfPath(
  path: string,
  base: string,
  sideChannels: Pick<ReadonlySet<string>, 'has'>,
  hasAgent: (name: string) => boolean = () => false,
): { endpoint: string; server?: string } {
  const rest = base === '' ? path : path.startsWith(base) ? path.slice(base.length) : undefined;
  if (rest === undefined) return { endpoint: 'gateway' };
  if (TRANSPORT_TAILS.has(rest) || rest === '/') return { endpoint: 'aggregate' };
  const match = /^\/servers\/([^/]+)(\/sse|\/messages)?$/.exec(rest);
  if (match?.[1] !== undefined && sideChannels.has(match[1])) return { endpoint: `server:${match[1]}`, server: match[1] };
  const agent = /^\/agents\/([^/]+)$/.exec(rest)?.[1];
  if (agent !== undefined && hasAgent(agent)) return { endpoint: `agent:${agent}` };
  return { endpoint: 'gateway' };
}

export function auditRefusals(options: AuditRefusalsOptions): MiddlewareHandler {
  return async function auditRefusal(c, next) {
    const started = Date.now();
    const startedAt = performance.now();
    await next();
    const refused = refusalOf(c.res);
    if (refused === undefined || !isRefusalCode(refused.code)) return;
    const { endpoint, server } = endpointOfPath(c.req.path, options.base, options.sideChannels, options.hasAgent);
    const principal = options.principalOf(c);
    const session = sessionTag(c.req.header('mcp-session-id'));
    options.audit.record({
      started,
      ...(principal === undefined ? {} : { principal }),
      ...(session === undefined ? {} : { session }),
      endpoint,
      ...(server === undefined ? {} : { server }),
      decision: auditDecision(refused.code),
      durationMs: performance.now() - startedAt,
      errorCode: refused.rpcCode,
      reason: refused.code,
      status: c.res.status,
      id: refused.id,
    });
  };
}
