/**
 * Forwarding a session's request to the replica that owns it, and the check on requests that
 * arrive forwarded. The response (JSON or a long SSE stream) is streamed back as it comes; the
 * client going away cancels the forwarded request.
 *
 * - Loops: a forwarded request carries `x-portcullis-forwarded-by`; a replica never forwards such
 *   a request again (it serves it, takes the session over, or answers 503).
 * - Trust: with `PORTCULLIS_CLUSTER_SECRET` set, every forwarded request carries a proof MACed
 *   under a key derived from it (never the secret itself) and a request claiming to be forwarded
 *   without a valid one is refused (403), so a client cannot pose as a replica to steer where a
 *   session lives.
 * - Principal: the client's credential stops at the replica it reached; the owner learns who the
 *   client is from a proof in `x-portcullis-principal-proof` (principal-proof.ts), bound to the
 *   session, method and path, valid for seconds, single-use, MACed with the cluster secret.
 * - Origin is dropped: the receiving replica already checked it against its own allowlist, and
 *   the owner's default allowlist names the owner's port, not the one the client used.
 * - Egress: the owner's URL comes from Redis, so whoever can write there could name any host.
 *   It is held to the policy's rules for `cluster.advertiseUrl` before anything is sent (the
 *   request carries the client's session and the cluster secret), and dialled through the egress
 *   guard, which judges the address actually dialled.
 */
import { refusal } from '../errors.js';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { bindingOf, checkProof, PROOF_HEADER } from './principal-proof.js';

export const HOP_HEADER = 'x-portcullis-forwarded-by';
export const SECRET_HEADER = 'x-portcullis-cluster-secret';

/** Request headers never copied to the owner (hop-by-hop, recomputed, or checked here already). */
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'upgrade', 'content-length', 'origin', HOP_HEADER, SECRET_HEADER, PROOF_HEADER]);
/** Response headers not copied back (the body is re-framed by this replica's server). */
const DROPPED_BACK = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

/** How long the owner may take to answer with headers (an SSE response answers at once). */
const HEADERS_TIMEOUT_MS = 10_000;

export type ForwardedCheck =
  | { ok: true; forwarded: boolean }
  | { ok: false; code: 'CLUSTER_SECRET_MISMATCH'; message: string };

/**
 * Whether `request` claims to be forwarded, and whether that claim is allowed: with a cluster
 * secret, only with a proof MACed under it for this very session, method and path, still valid
 * (principal-proof.ts). The secret itself never travels. Pure but for the clock.
 */
export function checkForwarded(request: Request, secret: string | undefined, now = Date.now()): ForwardedCheck {
  if (!request.headers.has(HOP_HEADER)) return { ok: true, forwarded: false };
  if (secret === undefined) return { ok: true, forwarded: true };
  const proof = request.headers.get(PROOF_HEADER);
  const binding = bindingOf(request);
  if (proof !== null && binding !== undefined && checkProof(secret, proof, binding, now).ok) return { ok: true, forwarded: true };
  return { ok: false, code: 'CLUSTER_SECRET_MISMATCH', message: 'forwarded request refused: no valid proof under the cluster secret' };
}

export interface ForwardOptions {
  /** This replica's id, sent in the hop header. */
  replicaId: string;
  secret: string | undefined;
  /** The policy's verdict on a peer's base URL (the rules of `cluster.advertiseUrl`). */
  peerAllowed(url: string): { ok: true } | { ok: false; message: string };
  /** The guarded dispatcher for a peer URL (by its scheme: plaintext must stay private). */
  dispatcherFor(url: URL): Dispatcher;
  /** Refusals are logged here, naming the field only. */
  onRefused(message: string): void;
}


function headerPairs(headers: Headers): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  headers.forEach((value, name) => pairs.push([name, value]));
  return pairs;
}

/**
 * Sends `request` (whose body was already read and parsed into `body`) to the same path on
 * `ownerBase`, and returns the owner's answer as it streams. An owner that cannot be reached, or
 * that the policy does not let this replica reach, gets a 502 the client may retry (the lease
 * decides when the session is taken over instead).
 */
export async function forwardRequest(request: Request, body: unknown, ownerBase: string, options: ForwardOptions, proof?: string): Promise<Response> {
  const verdict = options.peerAllowed(ownerBase);
  if (!verdict.ok) {
    options.onRefused(verdict.message);
    return refusal('REPLICA_UNAVAILABLE', 'the replica owning this session is not one this gateway may reach');
  }
  const source = new URL(request.url);
  const target = new URL(`${source.pathname}${source.search}`, ownerBase);
  const headers = new Headers();
  request.headers.forEach((value, name) => {
    if (!DROPPED.has(name)) headers.set(name, value);
  });
  headers.set(HOP_HEADER, options.replicaId);
  if (proof !== undefined) headers.set(PROOF_HEADER, proof);
  const headersTimeout = new AbortController();
  const timer = setTimeout(() => headersTimeout.abort(), HEADERS_TIMEOUT_MS);
  let answer: Response;
  try {
    answer = (await undiciFetch(target, {
      dispatcher: options.dispatcherFor(target),
      method: request.method,
      headers: Object.fromEntries(headerPairs(headers)),
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.any([request.signal, headersTimeout.signal]),
    })) as unknown as Response;
  } catch {
    return refusal('REPLICA_UNAVAILABLE', 'the replica owning this session cannot be reached; retry');
  } finally {
    clearTimeout(timer);
  }
  const back = new Headers();
  answer.headers.forEach((value, name) => {
    if (!DROPPED_BACK.has(name)) back.append(name, value);
  });
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: back });
}
