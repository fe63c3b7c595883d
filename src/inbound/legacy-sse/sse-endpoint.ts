/**
 * The deprecated HTTP+SSE transport (MCP 2024-11-05) on one MCP endpoint, for clients that speak
 * nothing newer: `GET <path>/sse` opens a session and its stream, `POST <path>/messages?sessionId=…`
 * carries the client's messages into it.
 *
 * The sessions are the endpoint's own (`SseSessionHost`): the same registry and cap, the same
 * idle expiry, bound to the principal that opened them, closed (children reaped) with their
 * stream or at shutdown. The `sessionId` in the message URL is not the session's id but a
 * separate random token, known only to this table and the client: it is the credential of the
 * session, so it never reaches a log line (request logs carry the session id, which opens
 * nothing on its own).
 */
import type { AccessProfile } from '../../policy/access-policy.js';
import { randomUUID } from 'node:crypto';
import { errorResponse, GatewayError, refusal } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import { sessionTag } from '../../observability/session-tag.js';
import { readJsonRpcBody, type BodyLimits } from '../body.js';
import type { IncomingBody } from '../incoming-body.js';
import type { Session2025, SessionWire, SessionWireHooks } from '../session-2025.js';
import type { RequestLimiter } from '../../policy/request-limits.js';
import { chargeRequest, refusedRequest, type Caller } from '../entrance.js';
import { SseSessionTransport } from './sse-session-transport.js';

export interface SseSessionHost {
  /**
   * A started session of the endpoint on `wire`, admitted and counted against the session caps;
   * rejects with a `GatewayError` (rate limit, caps) when it may not open.
   */
  openSession(principal: string | undefined, wire: (hooks: SessionWireHooks) => SessionWire, access: AccessProfile | undefined): Promise<Session2025>;
}

export interface LegacySseOptions {
  host: SseSessionHost;
  limits: BodyLimits;
  logger: Logger;
  /** The policy's request rates: each POSTed request spends one at the entrance (entrance.ts). */
  limiter?: RequestLimiter | undefined;
}

export class LegacySseEndpoint {
  private readonly options: LegacySseOptions;
  /** Token → session, for live HTTP+SSE sessions only (each leaves when its transport closes). */
  private readonly byToken = new Map<string, Session2025>();

  constructor(options: LegacySseOptions) {
    this.options = options;
  }

  /** The GET: a new session for the caller, answered with its stream; `messagePath` is where it POSTs. */
  async open({ principal, access }: Caller, messagePath: string): Promise<Response> {
    const token = randomUUID();
    let transport: SseSessionTransport | undefined;
    let session: Session2025;
    try {
      session = await this.options.host.openSession(principal, (hooks) => {
        transport = new SseSessionTransport({
          hooks,
          token,
          endpoint: `${messagePath}?sessionId=${token}`,
          onClosed: () => this.byToken.delete(token),
        });
        return transport;
      }, access);
    } catch (error) {
      if (error instanceof GatewayError) return errorResponse(error);
      throw error;
    }
    if (transport === undefined) throw new Error('the session did not build its HTTP+SSE wire');
    this.byToken.set(token, session);
    this.options.logger.debug({ session: sessionTag(session.id) }, 'HTTP+SSE stream opened');
    return transport.open();
  }

  /**
   * A POSTed message. An unknown token and another principal's session are answered alike (404),
   * so a token learns nothing to someone it does not belong to.
   */
  async post(request: Request, caller: Caller, incoming?: IncomingBody): Promise<Response> {
    const { principal, access } = caller;
    const token = new URL(request.url).searchParams.get('sessionId');
    if (token === null || token === '') {
      return refusal('SESSION_ID_REQUIRED', 'Bad Request: sessionId query parameter is required');
    }
    const session = this.byToken.get(token);
    if (session === undefined || session.principal !== principal) {
      return refusal('SESSION_NOT_FOUND', 'Session not found');
    }
    const body = await readJsonRpcBody(request, this.options.limits, incoming);
    if (!body.ok) return errorResponse(body.error);
    // Refused before the session sees it; a client of this wire reads the refusal as the failure of its POST.
    const spent = await chargeRequest(this.options.limiter, caller, body.value);
    if (spent !== undefined) return refusedRequest(spent, body.value);
    // Judged by this POST's own token (session-2025.ts `handle`).
    return session.handle(request, body.value, access);
  }
}
