/**
 * A scope's `admit` (router.ts calls it before a request is routed): the policy's request rates
 * of the principal whose requests the scope serves.
 */
import type { RequestLimiter } from '../policy/request-limits.js';
import type { RouteScope } from './router.js';

export function admitFor(limiter: RequestLimiter | undefined, principal: string | undefined): RouteScope['admit'] {
  if (limiter === undefined) return undefined;
  return (method, tool) => limiter.admit({ principal, method, tool });
}
