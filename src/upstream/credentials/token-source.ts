/**
 * What every upstream credential mode hands the transport (upstream-credentials.ts): a token to
 * send as the upstream's `Authorization`, and a way to say the upstream refused it.
 */
import type { UpstreamAuthRequired } from '../auth-required.js';

export interface UpstreamTokenSource {
  /** A token to send now. Rejects with `UPSTREAM_UNAVAILABLE` naming the server when none can be had. */
  token(): Promise<string>;
  /**
   * The upstream refused the token (401): the next request fetches a new one. `refusal` is the
   * challenge it answered with, when it named protected resource metadata (auth-required.ts).
   */
  invalidate(token: string, refusal?: UpstreamAuthRequired): void;
}
