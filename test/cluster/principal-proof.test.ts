/**
 * The principal proof a forwarded request carries between replicas: valid only under the cluster
 * secret, for the session, method and path it was minted for, within its few seconds, once.
 */
import { describe, expect, it } from 'vitest';
import { mintProof, PROOF_TTL_MS, proofVerifier } from '../../src/cluster/principal-proof.js';

const binding = { sessionId: 's-1', method: 'POST', path: '/mcp' };

describe('principal proofs', () => {
  it('carries the principal to a verifier holding the same secret, once', () => {
    const now = 1_000_000;
    const verify = proofVerifier('secret', () => now);
    const proof = mintProof('secret', 'alice', binding, now);
    expect(verify(proof, binding)).toEqual({ ok: true, principal: 'alice' });
    expect(verify(proof, binding)).toEqual({ ok: false, reason: 'proof replayed' });
    const anonymous = mintProof('secret', undefined, binding, now);
    expect(verify(anonymous, binding)).toEqual({ ok: true, principal: undefined });
  });

  it("carries the key of the token's access profile, under the MAC like the principal", () => {
    const now = 3_000_000;
    const verify = proofVerifier('secret', () => now);
    const proof = mintProof('secret', 'alice', binding, now, 'access:fp:0,2');
    expect(verify(proof, binding)).toEqual({ ok: true, principal: 'alice', access: 'access:fp:0,2' });
    const [payload, signature] = mintProof('secret', 'alice', binding, now, 'access:fp:2').split('.');
    const widened = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), a: 'access:fp:0' })).toString('base64url');
    expect(verify(`${widened}.${signature}`, binding)).toMatchObject({ ok: false, reason: 'proof not signed with the cluster secret' });
  });

  it('refuses another secret, another request, an expired or a tampered proof', () => {
    const now = 2_000_000;
    const verify = proofVerifier('secret', () => now);
    expect(verify(mintProof('other', 'alice', binding, now), binding)).toMatchObject({ ok: false, reason: 'proof not signed with the cluster secret' });
    expect(verify(mintProof('secret', 'alice', binding, now), { ...binding, sessionId: 's-2' })).toMatchObject({ ok: false, reason: 'proof is for another request' });
    expect(verify(mintProof('secret', 'alice', binding, now), { ...binding, method: 'DELETE' })).toMatchObject({ ok: false });
    expect(verify(mintProof('secret', 'alice', binding, now), { ...binding, path: '/mcp/servers/x' })).toMatchObject({ ok: false });
    expect(verify(mintProof('secret', 'alice', binding, now - PROOF_TTL_MS - 1), binding)).toMatchObject({ ok: false, reason: 'proof expired' });
    const proof = mintProof('secret', 'alice', binding, now);
    const [payload, signature] = proof.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), p: 'admin' })).toString('base64url');
    expect(verify(`${forged}.${signature}`, binding)).toMatchObject({ ok: false, reason: 'proof not signed with the cluster secret' });
    expect(verify('garbage', binding)).toMatchObject({ ok: false, reason: 'malformed proof' });
    expect(verify('x'.repeat(5000), binding)).toMatchObject({ ok: false, reason: 'proof too long' });
  });

  it('refuses new proofs while the nonce store is full of unexpired nonces, rather than forgetting one', () => {
    let now = 4_000_000;
    const verify = proofVerifier('secret', () => now, 3);
    const proofs = [1, 2, 3].map(() => mintProof('secret', 'alice', binding, now));
    for (const proof of proofs) expect(verify(proof, binding)).toMatchObject({ ok: true });
    const fourth = mintProof('secret', 'alice', binding, now);
    expect(verify(fourth, binding)).toEqual({ ok: false, reason: 'too many forwarded requests within a proof lifetime' });
    // Every accepted nonce is still remembered: the oldest proof cannot be replayed.
    expect(verify(proofs[0]!, binding)).toEqual({ ok: false, reason: 'proof replayed' });
    // Once they expire, places come back.
    now += PROOF_TTL_MS + 1;
    expect(verify(mintProof('secret', 'alice', binding, now), binding)).toMatchObject({ ok: true });
  });
});
