/**
 * The token sources of every server with `upstreamAuth`, built per server on first use from its
 * `url` and `upstreamAuth` (built again, the old one's tokens dropped, when a reload moves the
 * `url`; a reload that changes `upstreamAuth` needs a restart),
 * each with its own egress dispatcher to its token endpoint (an infrastructure connection: the
 * entry's `allowPrivateNetwork`, plaintext only off the public internet), closed with its source.
 * A `perUser` server's token comes from the session that owns the connection (user-tokens.ts);
 * a connection no session owns (the primary, a pooled lease) carries none.
 */
import type { Dispatcher } from 'undici';
import type { Logger } from '../../observability/logger.js';
import type { RemoteServerConfig } from '../../config/schema.js';
import { createEgressDispatcher, createGuardedFetch } from '../../net/egress-guard.js';
import type { CredentialOwner } from './credential-owner.js';
import { clientCredentialsSource } from './client-credentials.js';
import type { UpstreamTokenSource } from './token-source.js';
import type { SubjectTokens } from './subject-tokens.js';
import { tokenExchange, type TokenExchange } from './token-exchange.js';
import type { UserTokens } from './user-tokens.js';

const TOKEN_CONNECT_TIMEOUT_MS = 5_000;
const TOKEN_BODY_BYTES = 64 * 1024;

export interface UpstreamCredentials {
  /** `owner`: whose connection asks (credential-owner.ts); the gateway's own modes ignore it. */
  tokenSourceFor(server: string, config: RemoteServerConfig, owner: CredentialOwner | undefined): UpstreamTokenSource | undefined;
  /** Drops `server`'s source and every token it holds (the server is stopped or removed). */
  forget(server: string): void;
  close(): Promise<void>;
}

export interface UpstreamCredentialsOptions {
  /** The callers' verified inbound tokens (`tokenExchange` reads them); absent: no server uses it. */
  subjectTokens?: SubjectTokens;
  /**
   * The inbound issuer whose tokens a `tokenExchange` without its own `issuer` exchanges: the
   * `jwt` issuer, or the one `oauth` issuer (the schema requires `issuer` when there are several).
   */
  subjectIssuer?: string;
  /** The 2025 sessions' own tokens (`perUser`); absent: no server takes them. */
  userTokens?: UserTokens;
}

interface Built {
  /** What the source was built from: the server's `url` and `upstreamAuth`. */
  readonly key: string;
  readonly source: UpstreamTokenSource | TokenExchange;
  readonly dispatcher: Dispatcher;
}

export function upstreamCredentials(readEnv: (name: string) => string | undefined, logger: Logger, options: UpstreamCredentialsOptions = {}): UpstreamCredentials {
  const { userTokens } = options;
  const sources = new Map<string, Built>();

  function drop(server: string): void {
    const built = sources.get(server);
    if (built === undefined) return;
    sources.delete(server);
    if ('clear' in built.source) built.source.clear();
    // Connections still draining with the old source fail their token requests; nothing else uses it.
    built.dispatcher.close().catch(() => undefined);
  }

  function build(server: string, config: RemoteServerConfig, auth: ClientCredentialsAuth | TokenExchangeAuth, key: string): Built {
    const field = `${server}.upstreamAuth`;
    const dispatcher = createEgressDispatcher({
      server: field,
      allowPrivateNetwork: auth.allowPrivateNetwork,
      allowPublic: new URL(auth.tokenUrl).protocol === 'https:',
      connectTimeoutMs: TOKEN_CONNECT_TIMEOUT_MS,
      logger,
    });
    const fetch = createGuardedFetch({ server: field, dispatcher, logger, limits: { maxMessageBytes: TOKEN_BODY_BYTES, maxOtherBodyBytes: TOKEN_BODY_BYTES } });
    const source =
      auth.kind === 'tokenExchange'
        ? tokenExchange({ server, upstreamUrl: config.url, config: auth, issuer: issuerFor(server, auth, options), subjects: subjectTokensFor(server, options), readEnv, fetch })
        : clientCredentialsSource({ server, upstreamUrl: config.url, config: auth, readEnv, fetch });
    return { key, source, dispatcher };
  }

  return {
    tokenSourceFor(server, config, owner) {
      const auth = config.upstreamAuth;
      if (auth === undefined) return undefined;
      if (auth.kind === 'perUser') return owner?.kind === 'session' ? userTokens?.sourceFor(owner.session, server) : undefined;
      // A reload that moves the server's url restarts it with the same name: a source built for
      // the old url would go on asking tokens for the old resource.
      const key = JSON.stringify([config.url, auth]);
      let built = sources.get(server);
      if (built?.key !== key) {
        drop(server);
        built = build(server, config, auth, key);
        sources.set(server, built);
      }
      const { source } = built;
      // Per principal: bound to the principal of this connection, never to anyone else's.
      if ('forPrincipal' in source) return source.forPrincipal(owner?.kind === 'principal' ? owner.principal : undefined);
      return source;
    },
    forget: drop,
    async close() {
      const all = [...sources.values()];
      sources.clear();
      await Promise.all(all.map((b) => b.dispatcher.close().catch(() => undefined)));
    },
  };
}

type TokenExchangeAuth = Extract<NonNullable<RemoteServerConfig['upstreamAuth']>, { kind: 'tokenExchange' }>;
type ClientCredentialsAuth = Extract<NonNullable<RemoteServerConfig['upstreamAuth']>, { kind: 'clientCredentials' }>;

function issuerFor(server: string, auth: TokenExchangeAuth, options: UpstreamCredentialsOptions): string {
  const issuer = auth.issuer ?? options.subjectIssuer;
  if (issuer === undefined) throw new TypeError(`${server}.upstreamAuth: tokenExchange needs "issuer" (the inbound issuer whose tokens its token endpoint exchanges)`);
  return issuer;
}

function subjectTokensFor(server: string, options: UpstreamCredentialsOptions): SubjectTokens {
  if (options.subjectTokens === undefined) throw new TypeError(`${server}.upstreamAuth: tokenExchange needs the callers' inbound tokens, and none are kept`);
  return options.subjectTokens;
}
