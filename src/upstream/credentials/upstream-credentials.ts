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
import type { SubjectTokens } from './subject-tokens.js';
import { tokenExchange, type TokenExchange } from './token-exchange.js';
import type { UserTokens } from './user-tokens.js';

const TOKEN_CONNECT_TIMEOUT_MS = 5_000;
const TOKEN_BODY_BYTES = 64 * 1024;

export interface UpstreamCredentials {
  /** `owner`: whose connection asks (credential-owner.ts); the gateway's own modes ignore it. */
  tokenSourceFor(server: string, config: RemoteServerConfig, owner: CredentialOwner | undefined): UpstreamTokenSource | undefined;
  close(): Promise<void>;
}

export interface UpstreamCredentialsOptions {
  /** The callers' verified inbound tokens (`tokenExchange` reads them); absent: no server uses it. */
  subjectTokens?: SubjectTokens;
  /** The 2025 sessions' own tokens (`perUser`); absent: no server takes them. */
  userTokens?: UserTokens;
}

export function upstreamCredentials(readEnv: (name: string) => string | undefined, logger: Logger, options: UpstreamCredentialsOptions = {}): UpstreamCredentials {
  const { userTokens } = options;
  const sources = new Map<string, UpstreamTokenSource | TokenExchange>();
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
        source =
          auth.kind === 'tokenExchange'
            ? tokenExchange({ server, upstreamUrl: config.url, config: auth, subjects: subjectTokensFor(server, options), readEnv, fetch })
            : clientCredentialsSource({ server, upstreamUrl: config.url, config: auth, readEnv, fetch });
        sources.set(server, source);
      }
      // Per principal: bound to the principal of this connection, never to anyone else's.
      if ('forPrincipal' in source) return source.forPrincipal(owner?.kind === 'principal' ? owner.principal : undefined);
      return source;
    },
    async close() {
      await Promise.all(dispatchers.splice(0).map((d) => d.close().catch(() => undefined)));
    },
  };
}

function subjectTokensFor(server: string, options: UpstreamCredentialsOptions): SubjectTokens {
  if (options.subjectTokens === undefined) throw new TypeError(`${server}.upstreamAuth: tokenExchange needs the callers' inbound tokens, and none are kept`);
  return options.subjectTokens;
}
