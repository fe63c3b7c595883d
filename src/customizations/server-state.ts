/**
 * A server's lifecycle state as the customisation list publishes it, from what the gateway really
 * sees of its primary connection (the one that proves the server is up):
 *
 * | connection                         | state      |
 * | ---------------------------------- | ---------- |
 * | not tried yet, or connecting       | `starting` |
 * | connected                          | `ready`    |
 * | last attempt failed, or it crashed | `error`    |
 * | an HTTP upstream asked for authorization (401/403 naming its metadata) | `authRequired` |
 * | closed (gateway stopping, or stopped by a global disable), or not run | `stopped` |
 *
 * A server with per-user credentials is shown to each session from its own token and connection
 * (`perUserState`).
 *
 * `error → starting` happens by itself: the gateway retries with backoff. An error's message
 * names the server and what failed, and takes only a code from the failure (an errno name, an
 * SDK code, an HTTP status): never a message, which can carry a command line, a URL or a header.
 */
import { GatewayError } from '../errors.js';
import { authRequiredIn, type UpstreamAuthRequired } from '../upstream/auth-required.js';
import { safeReason } from '../upstream/failure.js';
import type { SlotState } from '../upstream/slot.js';
import type { UserServerView } from '../upstream/credentials/user-tokens.js';
import type { McpServerState } from './types.js';

const STARTING: McpServerState = Object.freeze({ kind: 'starting' });
const READY: McpServerState = Object.freeze({ kind: 'ready' });
const STOPPED: McpServerState = Object.freeze({ kind: 'stopped' });

/** The machine type of a failure: the gateway's own error code when it raised one. */
function errorType(error: unknown): string {
  return error instanceof GatewayError ? error.code : 'UPSTREAM_UNAVAILABLE';
}

/** The failure's cause code, looked for below the gateway's own wrapping. */
function reasonOf(error: unknown): string {
  const below = error instanceof GatewayError && error.cause !== undefined ? safeReason(error.cause) : 'unknown error';
  return below === 'unknown error' ? safeReason(error) : below;
}

const AUTH_DESCRIPTIONS: Readonly<Record<UpstreamAuthRequired['challenge']['reason'], string>> = {
  required: 'needs authorization',
  expired: 'refused its credential as invalid or expired',
  insufficientScope: 'needs a credential with more scopes',
};

/**
 * An HTTP upstream that asked for authorization: its reason, its protected resource metadata
 * (RFC 9728, as fetched and checked) and the scopes its challenge named. The description is the
 * gateway's own words, never the upstream's `error_description`.
 */
function authRequiredState(server: string, auth: UpstreamAuthRequired): McpServerState {
  const { reason, scopes } = auth.challenge;
  return {
    kind: 'authRequired',
    reason,
    resource: auth.resource,
    ...(scopes === undefined ? {} : { requiredScopes: scopes }),
    description: `server ${JSON.stringify(server)} ${AUTH_DESCRIPTIONS[reason]}`,
  };
}

/** The published state of a running server's primary connection. */
export function serverState(server: string, slot: SlotState, lastError: unknown): McpServerState {
  switch (slot) {
    case 'idle':
    case 'connecting':
      return STARTING;
    case 'ready':
      return READY;
    case 'closed':
      return STOPPED;
    case 'error': {
      const auth = authRequiredIn(lastError);
      if (auth !== undefined) return authRequiredState(server, auth);
      return { kind: 'error', error: { errorType: errorType(lastError), message: `server ${JSON.stringify(server)} is not reachable (${reasonOf(lastError)})` } };
    }
    default: {
      const unreachable: never = slot;
      throw new TypeError(`unknown slot state ${String(unreachable)}`);
    }
  }
}

/**
 * The state one session's list shows of a server with per-user credentials (`upstreamAuth.kind:
 * "perUser"`), from what the gateway saw of *that session's* token and connection: with a token,
 * its own connection's state (an upstream refusal of it is `authRequired`); without one,
 * `authRequired` as the upstream last refused this session's token, else as it refused the
 * primary (which carries no user's token, so it is refused exactly like a session without one),
 * else the primary's state as it is.
 */
export function perUserState(server: string, view: UserServerView, primary: McpServerState): McpServerState {
  if (view.hasToken) {
    const connection = view.connection;
    if (connection === undefined) return STARTING;
    return serverState(server, connection.state === 'idle' ? 'connecting' : connection.state, connection.lastError);
  }
  if (view.refusal !== undefined) return authRequiredState(server, view.refusal);
  return primary;
}

/**
 * The primary's state of a per-user server: its token-less retries keep meeting the same
 * challenge, so while one is under way after such a refusal it stays `authRequired` rather than
 * flickering through `starting` at every retry (for sessionless callers and token-less sessions).
 */
export function perUserPrimaryState(server: string, slot: SlotState, lastError: unknown): McpServerState {
  const auth = slot === 'connecting' ? authRequiredIn(lastError) : undefined;
  return auth === undefined ? serverState(server, slot, lastError) : authRequiredState(server, auth);
}

/** A declared server the gateway cannot run: refused by the policy or of an unsupported transport (`error`). */
export function notRunState(server: string, reason: 'unsupported' | 'refused'): McpServerState {
  switch (reason) {
    case 'unsupported':
      return { kind: 'error', error: { errorType: 'UNSUPPORTED_TRANSPORT', message: `server ${JSON.stringify(server)} uses a transport the gateway cannot run` } };
    case 'refused':
      return { kind: 'error', error: { errorType: 'POLICY_REFUSED', message: `server ${JSON.stringify(server)} is not allowed by the policy; see its plugin's load message` } };
    default: {
      const unreachable: never = reason;
      throw new TypeError(`unknown reason ${String(unreachable)}`);
    }
  }
}
