/**
 * A 2025 session's own credentials for the servers it reaches with `upstreamAuth.kind: "perUser"`
 * (docs/authorization.md, "Credentials for upstreams"): the session is attached to the gateway's
 * token store while it lives and detached (its tokens dropped) when its scope closes.
 *
 * - Without a token of the session's, nothing is sent to the upstream for it: a call, and the
 *   session's lists of that server, are refused with `UPSTREAM_AUTH_REQUIRED` telling the client
 *   to authenticate. Its lists never fall back to another connection (the primary carries no
 *   user's token, and no other session's connection is ever used).
 * - With one, the session's own connection carries it; the authenticate route opens that
 *   connection afresh (`reconnect`), and the session hears its lists changed.
 * - An upstream refusal of the token (401, or 403 asking for more scopes, naming protected
 *   resource metadata) drops it: the connection is closed once the call is over, the session's
 *   list shows `authRequired` with what the upstream asked for, the session hears its lists
 *   changed, and the call fails with `UPSTREAM_AUTH_REQUIRED` saying to authenticate again. The
 *   refusal may reach the connection's own stream first (the token source records it, with its
 *   challenge, in the store): the next call then says the same, never that no token was given.
 */
import type { Logger } from '../../observability/logger.js';
import { authRequiredIn } from '../../upstream/auth-required.js';
import { credentialRefused, missingToken, takesUserTokens, type UserTokens } from '../../upstream/credentials/user-tokens.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { UpstreamLink } from '../../upstream/link.js';
import { notifyListsChanged, type DownstreamSink } from '../../rpc/sink.js';
import type { HeldConnection } from '../../upstream/connection-policy.js';
import type { SessionConnection } from './session-connection.js';

export interface SessionCredentialsOptions {
  readonly store: UserTokens;
  readonly sessionId: string;
  readonly principal: string | undefined;
  /** The session's own connections to its per-user servers. */
  readonly connections: ReadonlyMap<string, SessionConnection>;
  /** The session's standalone stream: where it hears its lists changed. */
  readonly owner: DownstreamSink;
  /** True while the session sees `server` (its enablement, its latest token's access profile): only then may it give a token for it. */
  visible(server: string): boolean;
  readonly logger: Logger;
}

export class SessionCredentials {
  private readonly options: SessionCredentialsOptions;
  private readonly detach: () => void;
  private readonly unsubscribes: Array<() => void> = [];

  /** The session's credentials, attached to `store`; undefined when it reaches no per-user server, has no id, or there is no store. */
  static attach(
    store: UserTokens | undefined,
    session: Omit<SessionCredentialsOptions, 'store' | 'sessionId'> & { readonly sessionId: string | undefined },
  ): SessionCredentials | undefined {
    const { sessionId } = session;
    if (store === undefined || sessionId === undefined || session.connections.size === 0) return undefined;
    return new SessionCredentials({ ...session, store, sessionId });
  }

  private constructor(options: SessionCredentialsOptions) {
    this.options = options;
    const { store, connections } = options;
    this.detach = store.attach(options.sessionId, options.principal, [...connections.keys()], {
      reconnect: (server) => this.reconnect(server),
      connection: (server) => {
        const slot = connections.get(server)?.slot;
        return slot === undefined ? undefined : { state: slot.state, lastError: slot.lastError };
      },
      changed: (server) => this.changed(server),
      visible: (server) => options.visible(server),
    });
    for (const connection of connections.values()) this.unsubscribes.push(connection.slot.onStateChange(() => store.noteConnection()));
  }

  /** True when `server` takes this session's own credential. */
  covers(server: string): boolean {
    return this.options.connections.has(server);
  }

  /**
   * Runs `fn` (a call, or opening the connection) with the session's token for `server`, `fn`
   * taking its connection through the `acquire` given to it: refused without a token; an
   * upstream refusal of it drops it and fails with a clear error.
   *
   * A refusal is an answer that says so — a 401 or 403 naming protected resource metadata, or a
   * 401 to this call's token (the token source marked it) — never any other failure: a call cut
   * because a new token reopened the connection fails as it failed, and the new token and its
   * connection stay.
   */
  async run<T>(server: string, fn: (acquire: () => Promise<HeldConnection>) => Promise<T>): Promise<T> {
    const { store, sessionId } = this.options;
    const connection = this.options.connections.get(server)!;
    const token = store.tokenOf(sessionId, server);
    if (token === undefined) {
      // Refused on the connection's own stream before this call: said as a refusal, as on the call.
      const refused = store.refusalOf(sessionId, server);
      throw refused === undefined ? missingToken(server) : credentialRefused(server, refused);
    }
    let used: UpstreamLink | undefined;
    const acquire = async (): Promise<HeldConnection> => {
      const held = await connection.acquire();
      used = held.link;
      return held;
    };
    try {
      return await fn(acquire);
    } catch (error) {
      const auth = authRequiredIn(error);
      if (auth === undefined && !store.wasRefused(sessionId, server, token)) throw error;
      // Only the token this call went out with: one set since (a new authenticate) stays.
      store.refused(sessionId, server, token, auth);
      // The call is over: the link that carried the refused token goes too (closing it while the
      // refusal was on its way would have failed the call as "connection closed") — only that
      // link, never one a new token opened since.
      if (used !== undefined) this.dropLink(connection, server, used);
      throw credentialRefused(server, auth?.challenge.reason ?? store.refusalOf(sessionId, server) ?? 'expired');
    }
  }

  /** The live link of `server`'s connection for the session's lists, opened with its token as needed. */
  listLink(server: string): Promise<UpstreamLink> {
    const connection = this.options.connections.get(server)!;
    const live = connection.current;
    if (live !== undefined && this.options.store.has(this.options.sessionId, server)) return Promise.resolve(live);
    return this.run(server, async (acquire) => {
      const held = await acquire();
      held.release();
      return held.link;
    });
  }

  /** Drops the session's tokens (it ended) and stops following its connections. */
  close(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.detach();
  }

  /** A new token: the connection opens afresh with it (an upstream session may be bound to its user). */
  private async reconnect(server: string): Promise<void> {
    const connection = this.options.connections.get(server)!;
    const live = connection.current;
    if (live !== undefined) await connection.slot.discard(live);
    // Attempts refused for an earlier token are no reason to make this one wait.
    connection.slot.forgetFailures();
    await this.run(server, async (acquire) => {
      const held = await acquire();
      held.release();
    });
    this.announce();
  }

  /**
   * A token set or dropped. A dropped one leaves the session's lists at once; its connection is
   * no longer used (no token goes out on it) and closes once the refused call is over, or at
   * the next token.
   */
  private changed(server: string): void {
    if (!this.options.store.has(this.options.sessionId, server)) this.announce();
  }

  /** The session's lists of the server changed (it lists again and finds, or loses, its tools). */
  private announce(): void {
    notifyListsChanged(this.options.owner);
  }

  private dropLink(connection: SessionConnection, server: string, link: UpstreamLink): void {
    // `discard` closes `link` only if it is still the connection's live one.
    void connection.slot.discard(link).catch((error: unknown) =>
      this.options.logger.debug({ server, err: error instanceof Error ? error.message : String(error) }, 'closing a connection whose credential was dropped failed'),
    );
  }
}

/** True when one of `servers` takes each user's own credential (`upstreamAuth.kind: "perUser"`). */
export function reachesPerUserServer(registry: UpstreamRegistry, servers: readonly string[]): boolean {
  return servers.some((server) => takesUserTokens(registry.entry(server).config));
}
