/**
 * The labels of one request's sample (metrics.ts), taken from the catalogue and never from the
 * request as sent: a `tools/call` names its tool and owning server only when the catalogue lists
 * that name; any other name is `unknown`, so a client cannot grow the label set.
 */
import type { RouteScope } from './router.js';
import { UNKNOWN_LABEL } from '../observability/metrics.js';

export interface RequestLabels {
  method: string;
  server: string;
  tool: string;
}

export async function requestLabels(scope: RouteScope, method: string, params: Record<string, unknown>): Promise<RequestLabels> {
  // A side channel serves one server: every request of it is that server's.
  const single = scope.servers.length === 1 ? (scope.servers[0] ?? '') : '';
  if (method !== 'tools/call') return { method, server: single, tool: '' };
  const name = params.name;
  if (typeof name !== 'string') return { method, server: single, tool: UNKNOWN_LABEL };
  try {
    const target = (await scope.catalogue.tools()).index.get(name);
    return target === undefined ? { method, server: single, tool: UNKNOWN_LABEL } : { method, server: target.server, tool: name };
  } catch {
    // The catalogue could not be read (an upstream down): the call fails the same way.
    return { method, server: single, tool: UNKNOWN_LABEL };
  }
}
