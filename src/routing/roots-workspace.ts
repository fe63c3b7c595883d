/**
 * A 2025 session's primary workspace from its client's roots (MCP 2025-11-25, client/roots): the
 * first root `roots/list` reports. Only a client that declared the `roots` capability is asked;
 * the answer is bounded (a URI of at most {@link MAX_ROOT_URI_LENGTH} characters without control
 * characters), and a client that does not answer within {@link ROOTS_TIMEOUT_MS} leaves the
 * workspace as it was.
 */
import type { DownstreamSink } from '../rpc/sink.js';

export const MAX_ROOT_URI_LENGTH = 2_048;
const ROOTS_TIMEOUT_MS = 30_000;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `known: false`: nothing usable was said; else the workspace (undefined: the client has no roots). */
export type RootsAnswer = { readonly known: false } | { readonly known: true; readonly uri: string | undefined };

const UNKNOWN: RootsAnswer = Object.freeze({ known: false });

/** What a `roots/list` result says the workspace is. Pure. */
export function firstRoot(result: unknown): RootsAnswer {
  const roots = (result as { roots?: unknown } | null | undefined)?.roots;
  if (!Array.isArray(roots)) return UNKNOWN;
  if (roots.length === 0) return { known: true, uri: undefined };
  const uri = (roots[0] as { uri?: unknown } | null | undefined)?.uri;
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > MAX_ROOT_URI_LENGTH || CONTROL.test(uri)) return UNKNOWN;
  return { known: true, uri };
}

/** Asks the session's client for its roots. Never rejects: a failure is `known: false`. */
export async function learnWorkspaceFromRoots(owner: DownstreamSink): Promise<RootsAnswer> {
  if (owner.clientCapabilities?.roots === undefined) return UNKNOWN;
  try {
    return firstRoot(await owner.request({ method: 'roots/list' }, AbortSignal.timeout(ROOTS_TIMEOUT_MS)));
  } catch {
    return UNKNOWN;
  }
}
