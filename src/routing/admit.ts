/**
 * A scope's `admitTool` (router.ts calls it once a call's tool is resolved): the policy's
 * per-tool rate of the principal whose requests the scope serves. The request rate is not
 * spent here: the entrance charged it (inbound/entrance.ts).
 */
import type { RequestLimiter } from '../policy/request-limits.js';
import type { RouteScope } from './router.js';

export function admitToolFor(limiter: RequestLimiter | undefined, principal: string | undefined): RouteScope['admitTool'] {
  if (limiter === undefined) return undefined;
  return (tool) => limiter.admitTool({ principal, tool });
}
