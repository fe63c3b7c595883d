/**
 * The resume path of a 2025-era session (GET with `Last-Event-ID`): `refusedResume` answers a
 * resume point the store cannot honour — malformed or unknown id → 400, history evicted → 410
 * Gone, store unreachable → 503 — always with a JSON-RPC error body saying why. Checked before
 * the transport replays anything, so a store failure is never a bare HTTP 500 (the SDK's transport
 * turns a store that throws during replay into one).
 * The replay itself, attached before the history is read, is in session-transport.ts.
 */
import { refusal, type GatewayErrorCode } from '../errors.js';
import type { ResumePoint } from '../session/event-store.js';

const CODE: Readonly<Record<Exclude<ResumePoint, { ok: true }>['code'], GatewayErrorCode>> = {
  malformed: 'RESUME_REFUSED',
  unknown: 'RESUME_REFUSED',
  evicted: 'RESUME_EVICTED',
  unavailable: 'RESUME_UNAVAILABLE',
};

/** The HTTP answer to a resume point that cannot be resumed from. */
export function refusedResume(point: Exclude<ResumePoint, { ok: true }>): Response {
  return refusal(CODE[point.code], point.message);
}
