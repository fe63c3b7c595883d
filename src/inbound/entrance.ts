/**
 * The one entrance of every MCP request: every endpoint (the aggregate, each side channel, each
 * agent endpoint), both eras, both wires (Streamable HTTP, and HTTP+SSE's POSTed messages) pass
 * through here once the body is parsed and before anything dispatches the message. It holds what
 * must not depend on which feature answers a request:
 *
 * - **who is asking** ({@link Caller}): the principal authentication established and the access
 *   profile the policy's rules give it (policy/access-view.ts says what that profile shows);
 * - **the `requests` budget**, charged once per JSON-RPC request ({@link chargeRequest}) — the
 *   gateway's own methods (`initialize`, `server/discover`, `ping`, merged lists), meta-tools
 *   (`search_tools`), an agent's `prompts/get`, reads of the gateway's own resources and 2026
 *   listens included, since an answer the gateway builds costs it as much as a relayed one. The
 *   per-tool budget is spent where the tool is resolved (routing/router.ts), so `call_tool`
 *   spends its inner tool's.
 *
 * Answers and notifications a client POSTs are not requests and spend nothing; a request a peer
 * replica forwarded with a proof of its principal was charged by the replica that received it.
 */
import { errorResponse, GatewayError } from '../errors.js';
import type { AccessProfile } from '../policy/access-policy.js';
import type { RequestLimiter } from '../policy/request-limits.js';

/** Who is asking, as the edge established it. */
export interface Caller {
  /** The authenticated principal; undefined when authentication is off. */
  readonly principal: string | undefined;
  /** What the policy's access rules let this caller see; undefined when they hide nothing from anyone. */
  readonly access: AccessProfile | undefined;
  /** A peer replica forwarded the request with a valid proof of its principal: that replica charged it. */
  readonly forwarded?: boolean;
}

/** The caller of a request when authentication is off and no rule applies. */
export const ANYONE: Caller = Object.freeze({ principal: undefined, access: undefined });

/** A JSON-RPC request's id, or undefined when `message` is no request (an answer, a notification, not an object). */
export function requestIdOf(message: unknown): string | number | undefined {
  if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message)) return undefined;
  const id = (message as { id: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * Spends one request of `caller` when `message` is a JSON-RPC request. Undefined when admitted
 * (or not a request, or forwarded, or no budget is set); otherwise the refusal to answer it with,
 * in band (see {@link refusedRequest}).
 */
export async function chargeRequest(limiter: RequestLimiter | undefined, caller: Caller, message: unknown): Promise<GatewayError | undefined> {
  if (limiter === undefined || caller.forwarded === true) return undefined;
  if (requestIdOf(message) === undefined) return undefined;
  const method = (message as { method: unknown }).method;
  try {
    await limiter.admit({ principal: caller.principal, method: typeof method === 'string' ? method : '' });
    return undefined;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

/**
 * The answer to a request refused at the entrance: its JSON-RPC error under the request's own id,
 * in band (HTTP 200, as every other JSON-RPC error of a request is answered), so a model reads it
 * as the answer to its call; `Retry-After` says when a spent budget refills.
 */
export function refusedRequest(error: GatewayError, message: unknown): Response {
  const id = requestIdOf(message);
  return errorResponse(error, { ...(id === undefined ? {} : { id }), inBand: true });
}
