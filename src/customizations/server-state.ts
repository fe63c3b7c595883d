/**
 * A server's lifecycle state as the customisation list publishes it, from what the gateway really
 * sees of its primary connection (the one that proves the server is up):
 *
 * | connection                         | state      |
 * | ---------------------------------- | ---------- |
 * | not tried yet, or connecting       | `starting` |
 * | connected                          | `ready`    |
 * | last attempt failed, or it crashed | `error`    |
 * | closed (gateway stopping, or stopped by a global disable) | `stopped` |
 *
 * `error → starting` happens by itself: the gateway retries with backoff. An error's message
 * names the server and what failed, and takes only a code from the failure (an errno name, an
 * SDK code, an HTTP status): never a message, which can carry a command line, a URL or a header.
 */
import { GatewayError } from '../errors.js';
import { safeReason } from '../upstream/failure.js';
import type { SlotState } from '../upstream/slot.js';
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
    case 'error':
      return { kind: 'error', error: { errorType: errorType(lastError), message: `server ${JSON.stringify(server)} is not reachable (${reasonOf(lastError)})` } };
    default: {
      const unreachable: never = slot;
      throw new TypeError(`unknown slot state ${String(unreachable)}`);
    }
  }
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
