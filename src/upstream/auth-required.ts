/**
 * An HTTP upstream that refuses the gateway for want of authorization: a 401, or a 403
 * `insufficient_scope`, whose `WWW-Authenticate` names protected resource metadata (RFC 9728
 * §5.1; MCP 2025-11-25, "Authorization"). The upstream fetch turns such an answer into an
 * {@link UpstreamAuthRequired} carrying the challenge and the fetched metadata, which the
 * customisation list shows as the server's `authRequired` state. The error's message names the
 * server and the reason only; the metadata (public by design) travels beside it, never in it.
 */
import type { Dispatcher } from 'undici';
import { findCause, UpstreamError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { authChallengeOf, type AuthChallenge } from './auth-challenge.js';
import { fetchProtectedResourceMetadata, type ProtectedResourceMetadata } from './protected-resource.js';

const REASON_WORDS: Readonly<Record<AuthChallenge['reason'], string>> = {
  required: 'needs authorization (HTTP 401)',
  expired: 'refused its credential as invalid or expired (HTTP 401)',
  insufficientScope: 'needs a credential with more scopes (HTTP 403)',
};

export class UpstreamAuthRequired extends UpstreamError {
  readonly challenge: AuthChallenge;
  readonly resource: ProtectedResourceMetadata;

  constructor(server: string, challenge: AuthChallenge, resource: ProtectedResourceMetadata) {
    super('UPSTREAM_AUTH_REQUIRED', server, REASON_WORDS[challenge.reason]);
    this.name = 'UpstreamAuthRequired';
    this.challenge = challenge;
    this.resource = resource;
  }
}

/** The authorization refusal along `error`'s cause chain (bounded), if any. */
export function authRequiredIn(error: unknown): UpstreamAuthRequired | undefined {
  return findCause(error, (value): value is UpstreamAuthRequired => value instanceof UpstreamAuthRequired);
}

export interface AuthChallengeOptions {
  readonly server: string;
  readonly upstreamUrl: string;
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
}

/**
 * The refusal an answer is when it asks for authorization (see `authChallengeOf`): an
 * {@link UpstreamAuthRequired} once the metadata it names is fetched; undefined for any other
 * answer. The caller releases the answer's body.
 */
export async function authRefusal(status: number, wwwAuthenticate: string | null | undefined, options: AuthChallengeOptions): Promise<UpstreamAuthRequired | undefined> {
  if (status !== 401 && status !== 403) return undefined;
  const challenge = authChallengeOf(status, wwwAuthenticate ?? null);
  if (challenge === undefined) return undefined;
  const resource = await fetchProtectedResourceMetadata(challenge.resourceMetadata, options);
  options.logger.warn({ server: options.server, reason: challenge.reason }, 'upstream asks for authorization');
  return new UpstreamAuthRequired(options.server, challenge, resource);
}
