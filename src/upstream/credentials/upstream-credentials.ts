/**
 * The token sources of every server with `upstreamAuth`, built once per server on first use, each
 * with its own egress dispatcher to its token endpoint (an infrastructure connection: the
 * entry's `allowPrivateNetwork`, plaintext only off the public internet), closed with the gateway.
 * A `perUser` server's token comes from the session that owns the connection (user-tokens.ts);
 * a connection no session owns (the primary, a pooled lease) carries none.
 */
import type { Dispatcher } from 'undici';
import type { Logger } from '../../observability/logger.js';
import type { RemoteServerConfig } from '../../config/schema.js';
import { createEgressDispatcher, createGuardedFetch } from '../../net/egress-guard.js';
import type { CredentialOwner } from './credential-owner.js';
import { clientCredentialsSource, type UpstreamTokenSource } from './client-credentials.js';
import type { UserTokens } from './user-tokens.js';

const TOKEN_CONNECT_TIMEOUT_MS = 5_000;
const TOKEN_BODY_BYTES = 64 * 1024;

export interface UpstreamCredentials {
  /** `owner`: whose connection asks (credential-owner.ts); the gateway's own modes ignore it. */
  tokenSourceFor(server: string, config: RemoteServerConfig, owner: CredentialOwner | undefined): UpstreamTokenSource | undefined;
  close(): Promise<void>;
}

export function upstreamCredentials(readEnv: (name: string) => string | undefined, logger: Logger, userTokens?: UserTokens): UpstreamCredentials {
  const sources = new Map<string, UpstreamTokenSource>();
  const dispatchers: Dispatcher[] = [];
  return {
    tokenSourceFor(server, config, owner) {
      const auth = config.upstreamAuth;
      if (auth === undefined) return undefined;
      if (auth.kind === 'perUser') return owner?.kind === 'session' ? userTokens?.sourceFor(owner.session, server) : undefined;
      let source = sources.get(server);
      if (source === undefined) {
        const field = `${server}.upstreamAuth`;
        const dispatcher = createEgressDispatcher({
          server: field,
          allowPrivateNetwork: auth.allowPrivateNetwork,
          allowPublic: new URL(auth.tokenUrl).protocol === 'https:',
          connectTimeoutMs: TOKEN_CONNECT_TIMEOUT_MS,
          logger,
        });
        dispatchers.push(dispatcher);
        const fetch = createGuardedFetch({ server: field, dispatcher, logger, limits: { maxMessageBytes: TOKEN_BODY_BYTES, maxOtherBodyBytes: TOKEN_BODY_BYTES } });
        source = clientCredentialsSource({ server, upstreamUrl: config.url, config: auth, readEnv, fetch });
        sources.set(server, source);
      }
      return source;
    },
    async close() {
      await Promise.all(dispatchers.splice(0).map((d) => d.close().catch(() => undefined)));
    },
  };
}
