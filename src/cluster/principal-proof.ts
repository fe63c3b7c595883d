/**
 * How a forwarded request tells the owning replica who the client is. The client's credential
 * stops at the edge of the replica it reached (it is never forwarded), so that replica, having
 * authenticated the request, attaches a proof: the principal, bound to the session id, the HTTP
 * method and path, a few seconds of validity and a one-time nonce, MACed with the cluster secret
 * (HMAC-SHA256). The owner accepts the principal only with a valid proof: a request claiming to be
 * forwarded without one — or with one for another session, path or method, expired, replayed, or
 * MACed with another key — is refused.
 *
 * Proofs are short-lived and single-use, so one seen on the wire between replicas cannot be
 * presented again; between replicas use `https:` (or a private network) all the same, since a
 * forwarded request carries the client's session and its body.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const PROOF_HEADER = 'x-portcullis-principal-proof';

/** How long a proof is good for: a forward is one hop on a private network. */
export const PROOF_TTL_MS = 5_000;

export interface ProofBinding {
  sessionId: string;
  method: string;
  path: string;
}

interface ProofBody {
  /** The principal; absent for an unauthenticated caller (auth off). */
  p?: string;
  /** The key of the access profile the client's token matched (policy/access-policy.ts); absent without access rules. */
  a?: string;
  s: string;
  m: string;
  u: string;
  /** Expiry, ms since the epoch. */
  e: number;
  n: string;
}

/** The proof key: derived from the cluster secret, never the secret itself (which no request carries). */
function mac(secret: string, payload: string): Buffer {
  const key = createHmac('sha256', secret).update('portcullis principal proof v1').digest();
  return createHmac('sha256', key).update(payload).digest();
}

/**
 * `access`: the key of the access profile the client's token matched on this replica, so the owner
 * judges the forwarded request by that token's claims, which it never sees.
 */
export function mintProof(secret: string, principal: string | undefined, binding: ProofBinding, now = Date.now(), access?: string): string {
  const body: ProofBody = {
    ...(principal === undefined ? {} : { p: principal }),
    ...(access === undefined ? {} : { a: access }),
    s: binding.sessionId,
    m: binding.method,
    u: binding.path,
    e: now + PROOF_TTL_MS,
    n: randomBytes(12).toString('base64url'),
  };
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${payload}.${mac(secret, payload).toString('base64url')}`;
}

export type ProofVerdict = { ok: true; principal: string | undefined; access?: string } | { ok: false; reason: string };

const MAX_PROOF_LENGTH = 4096;
const SEEN_MAX = 100_000;

/**
 * Whether `proof` is valid for `binding` now — MAC, binding and expiry, not whether it was seen
 * before (a request's forwarded-check looks; the principal's verifier also consumes the nonce).
 */
export function checkProof(secret: string, proof: string, binding: ProofBinding, at: number): (ProofVerdict & { ok: true; nonce: string; expiry: number }) | (ProofVerdict & { ok: false }) {
  if (proof.length > MAX_PROOF_LENGTH) return { ok: false, reason: 'proof too long' };
  const dot = proof.indexOf('.');
  if (dot <= 0) return { ok: false, reason: 'malformed proof' };
  const payload = proof.slice(0, dot);
  const given = Buffer.from(proof.slice(dot + 1), 'base64url');
  const expected = mac(secret, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'proof not signed with the cluster secret' };
  let body: ProofBody;
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as ProofBody;
  } catch {
    return { ok: false, reason: 'malformed proof' };
  }
  if (typeof body.e !== 'number' || body.e <= at || body.e > at + 2 * PROOF_TTL_MS) return { ok: false, reason: 'proof expired' };
  if (body.s !== binding.sessionId || body.m !== binding.method || body.u !== binding.path) return { ok: false, reason: 'proof is for another request' };
  if (typeof body.n !== 'string') return { ok: false, reason: 'malformed proof' };
  return {
    ok: true,
    principal: typeof body.p === 'string' ? body.p : undefined,
    ...(typeof body.a === 'string' ? { access: body.a } : {}),
    nonce: body.n,
    expiry: body.e,
  };
}

/**
 * A verifier remembering the nonces it accepted until they expire. The memory is bounded by
 * `maxNonces` (default {@link SEEN_MAX}): when that many unexpired nonces are held, a new proof is
 * refused rather than an unexpired nonce forgotten — forgetting one would let its proof be replayed
 * within its lifetime. A proof lives at most 2 × {@link PROOF_TTL_MS}, so the store is full only
 * while more than `maxNonces` forwards arrive in that window (10,000 a second by default); the
 * forwarding replica then sees the refusal and its client may retry.
 */
export function proofVerifier(secret: string, now: () => number = Date.now, maxNonces = SEEN_MAX): (proof: string, binding: ProofBinding) => ProofVerdict {
  // Insertion order is close to expiry order (every minter adds the same lifetime), so expired
  // nonces are dropped from the front; one minted with a later expiry holds the rest at most a lifetime.
  const seen = new Map<string, number>();
  const forgetExpired = (at: number) => {
    for (const [nonce, expiry] of seen) {
      if (expiry > at) break;
      seen.delete(nonce);
    }
  };
  return function verifyProof(proof, binding) {
    const at = now();
    const checked = checkProof(secret, proof, binding, at);
    if (!checked.ok) return checked;
    if (seen.has(checked.nonce)) return { ok: false, reason: 'proof replayed' };
    forgetExpired(at);
    if (seen.size >= maxNonces) return { ok: false, reason: 'too many forwarded requests within a proof lifetime' };
    seen.set(checked.nonce, checked.expiry);
    return { ok: true, principal: checked.principal, ...(checked.access === undefined ? {} : { access: checked.access }) };
  };
}

/** What a forwarded request is bound to: its session, method and path. */
export function bindingOf(request: Request): ProofBinding | undefined {
  const sessionId = request.headers.get('mcp-session-id');
  return sessionId === null ? undefined : { sessionId, method: request.method, path: new URL(request.url).pathname };
}
