/**
 * What watches one MCP request the gateway answers, besides the `rpc` log line and metrics: its
 * server span (observability/tracing.ts) and its audit line (observability/audit-log.ts). Both
 * are off unless configured; then {@link observeRequest} returns `undefined` at once and the
 * request path allocates nothing for them.
 */
import { GatewayError, toJsonRpcError } from '../errors.js';
import { AUDITED_METHODS, type AuditLog } from '../observability/audit-log.js';
import { auditDecision, isRefusalCode } from '../observability/audit-decision.js';
import { sessionTag } from '../observability/session-tag.js';
import { spanFailureOf } from '../observability/span-failure.js';
import { runNoted, type RequestNote, type RequestSpan, type Tracing } from '../observability/tracing.js';
import type { AccessProfile } from '../policy/access-policy.js';
import type { HiddenReasonCheck } from '../policy/hidden-reason.js';

export interface RequestObservers {
  tracing?: Tracing;
  audit?: AuditLog;
  /** The endpoint as audit lines name it: `aggregate`, `server:<name>`, `agent:<name>`. */
  endpoint: string;
  /** Why a called name is hidden (audit `decision`); absent: every unknown name is just unknown. */
  hiddenReason?: HiddenReasonCheck;
}

export interface ObservedRequest {
  method: string;
  params: Record<string, unknown>;
  sessionId: string | undefined;
  requestId: string | number;
  principal: string | undefined;
  headers: Headers | undefined;
  meta: Record<string, unknown> | undefined;
  /** The caller's profile under the policy's `access` rules, when they apply (names the rule that hid a name). */
  access?: AccessProfile | undefined;
}

export interface RequestObservation {
  /** Runs the request's work under its span and note. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Ends the span and writes the audit line; `error` is what the request failed with. */
  finish(error?: unknown): void;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function observeRequest(observers: RequestObservers | undefined, request: ObservedRequest): RequestObservation | undefined {
  if (observers === undefined) return undefined;
  const { tracing, audit } = observers;
  if (tracing === undefined && audit === undefined) return undefined;
  const started = Date.now();
  const startedAt = performance.now();
  const tag = sessionTag(request.sessionId);
  const { method, params } = request;
  const span: RequestSpan | undefined = tracing?.startRequest({
    method,
    ...(tag === undefined ? {} : { sessionTag: tag }),
    requestId: request.requestId,
    name: params.name,
    uri: params.uri,
    ...(request.meta === undefined ? {} : { meta: request.meta }),
    ...(request.headers === undefined ? {} : { headers: request.headers }),
  });
  // The link notes the upstream it sent the request to; the audit line names it.
  const note: RequestNote | undefined = span === undefined && audit !== undefined && AUDITED_METHODS.has(method) ? {} : undefined;
  return {
    run(work) {
      if (span !== undefined) return span.run(work);
      return note === undefined ? work() : runNoted(note, work);
    },
    finish(error) {
      span?.end(error === undefined ? undefined : spanFailureOf(error));
      if (audit === undefined) return;
      const reason = error instanceof GatewayError ? error.code : undefined;
      if (!AUDITED_METHODS.has(method) && !isRefusalCode(reason)) return;
      const name = stringOf(params.name);
      const hidden =
        name !== undefined && (reason === 'UNKNOWN_TOOL' || reason === 'UNKNOWN_PROMPT')
          ? observers.hiddenReason?.(reason === 'UNKNOWN_TOOL' ? 'tool' : 'prompt', name, request.access)
          : undefined;
      const server = span?.server ?? note?.server ?? hidden?.server;
      audit.record({
        started,
        method,
        ...(request.principal === undefined ? {} : { principal: request.principal }),
        ...(tag === undefined ? {} : { session: tag }),
        endpoint: observers.endpoint,
        ...(server === undefined ? {} : { server }),
        ...(method === 'tools/call' && name !== undefined ? { tool: name } : {}),
        ...(method === 'prompts/get' && name !== undefined ? { prompt: name } : {}),
        ...(method === 'resources/read' && typeof params.uri === 'string' ? { uri: params.uri } : {}),
        decision: auditDecision(reason, hidden?.reason),
        ...(hidden?.rule === undefined ? {} : { rule: hidden.rule }),
        durationMs: performance.now() - startedAt,
        ...(error === undefined ? {} : { errorCode: toJsonRpcError(error).code }),
        ...(reason === undefined ? {} : { reason }),
        id: request.requestId,
      });
    },
  };
}
