/**
 * Whose list an HTTP request of `<path>/customizations…` reads: the caller's own session when it
 * sends `Mcp-Session-Id` (its decisions and its workspace's), else the workspace it names with
 * `?workspace=` (global decisions otherwise). A session id of another principal, or of no live
 * session, is answered 404 exactly like the MCP endpoint answers it: nobody can read another
 * session's decisions by presenting its id.
 */
import { GatewayError } from '../errors.js';
import type { Viewer } from './enablement/decisions.js';
import type { Enablement, SessionRecord } from './enablement/enablement.js';
import { checkWorkspace } from './toggle-check.js';

export interface CallerView {
  /** The caller's session, when it named one of its own. */
  readonly session: SessionRecord | undefined;
  /** The viewer now (a session's workspace can be learnt later, so it is asked each time). */
  viewer(): Viewer;
}

const NOBODY: Viewer = Object.freeze({});

/** The caller's view, or the refusal to answer. */
export function callerView(
  request: { header(name: string): string | undefined; query(name: string): string | undefined },
  principal: string | undefined,
  enablement: Enablement | undefined,
): CallerView | GatewayError {
  const sessionId = request.header('mcp-session-id');
  const workspace = request.query('workspace');
  if (workspace !== undefined && !checkWorkspace(workspace)) {
    return new GatewayError('INVALID_PARAMS', 'the workspace query parameter must be a URI without control characters');
  }
  if (sessionId !== undefined) {
    const session = enablement?.session(sessionId, principal);
    if (session === undefined) return new GatewayError('SESSION_NOT_FOUND', 'Session not found');
    return { session, viewer: () => session.viewer() };
  }
  const viewer: Viewer = workspace === undefined ? NOBODY : { workspace };
  return { session: undefined, viewer: () => viewer };
}

/**
 * The caller's view for a change it asks (toggle, authenticate): its own session when it sends
 * `Mcp-Session-Id`, else global decisions; a change names its workspace in the body, never by
 * `?workspace=`.
 */
export function sessionCallerView(
  request: { header(name: string): string | undefined },
  principal: string | undefined,
  enablement: Enablement | undefined,
): CallerView | GatewayError {
  return callerView({ header: (name) => request.header(name), query: () => undefined }, principal, enablement);
}
