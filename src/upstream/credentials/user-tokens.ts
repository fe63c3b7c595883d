/**
 * The tokens clients give the gateway for servers with `upstreamAuth.kind: "perUser"`: one per
 * live 2025 session and server at most, held in memory only (never logged, persisted, listed or
 * put in an error), sent by that session's own connection to that server and by nothing else.
 *
 * A session is attached when its scope is built, with the per-user servers it reaches, and
 * detached when it ends (DELETE, idle expiry, a closed HTTP+SSE stream, shutdown): detaching
 * drops its tokens, so the store never holds a token of a session that is gone. A token is also
 * dropped the moment the upstream answers 401 to it — to a call or to the connection's own stream,
 * and either way the session's list and its next call say it was refused — and every session's token for a server when
 * a reload restarts or removes that server (`dropServer`: it was given for the upstream as it was).
 * A token is held only for a server the session sees (`UserSessionHooks.visible`). Bounded: tokens ≤ live sessions × per-user
 * servers (sessions are capped by `sessions.max`), each at most {@link MAX_UPSTREAM_TOKEN_LENGTH} bytes.
 * The session ids that key it are the gateway's own, never shown or logged.
 */
import { GatewayError, UpstreamError } from '../../errors.js';
import type { ServerConfig } from '../../config/schema.js';
import { MAX_UPSTREAM_TOKEN_LENGTH } from '../../net/bearer-token.js';
import type { UpstreamAuthRequired } from '../auth-required.js';
import type { AuthChallenge } from '../auth-challenge.js';
import type { SlotState } from '../slot.js';
import type { UpstreamTokenSource } from './token-source.js';


/** What a live session lets the store ask of its own connections. */
export interface UserSessionHooks {
  /** Opens the session's connection to `server` afresh, with the token now held; rejects as that connection does. */
  reconnect(server: string): Promise<void>;
  /** The state of the session's own connection to `server` (what its customisation list shows). */
  connection(server: string): { readonly state: SlotState; readonly lastError: unknown } | undefined;
  /** The session's token for `server` was set or dropped. */
  changed(server: string): void;
  /** True while the session sees `server` (its enablement, its latest token's access profile): a token for a server it does not see is refused. */
  visible(server: string): boolean;
}

/** What the store knows of one session and one per-user server, for its customisation list. */
export interface UserServerView {
  readonly hasToken: boolean;
  /** The upstream's last refusal of this session's token (which dropped it), until a new one is set. */
  readonly refusal: UpstreamAuthRequired | undefined;
  readonly connection: { readonly state: SlotState; readonly lastError: unknown } | undefined;
}

interface UserSession {
  readonly principal: string | undefined;
  readonly servers: ReadonlySet<string>;
  readonly hooks: UserSessionHooks;
  readonly tokens: Map<string, string>;
  readonly refusals: Map<string, UpstreamAuthRequired>;
  /** Per server, the last token the upstream answered 401 to (what tells a refusal from any other failure of a call). */
  readonly refused: Map<string, string>;
}

export type SetTokenOutcome = 'accepted' | 'unknownSession' | 'notReached' | 'hidden';

export class UserTokens {
  private readonly sessions = new Map<string, UserSession>();
  private readonly listeners = new Set<() => void>();

  /** Attaches a live session reaching per-user `servers`; the returned function detaches it and drops its tokens. */
  attach(session: string, principal: string | undefined, servers: readonly string[], hooks: UserSessionHooks): () => void {
    const record: UserSession = { principal, servers: new Set(servers), hooks, tokens: new Map(), refusals: new Map(), refused: new Map() };
    this.sessions.set(session, record);
    return () => {
      if (this.sessions.get(session) !== record) return;
      this.sessions.delete(session);
      const held = record.tokens.size > 0;
      record.tokens.clear();
      record.refusals.clear();
      record.refused.clear();
      if (held) this.announce();
    };
  }

  /**
   * Holds `token` for `session`'s connection to `server`, replacing any it held. Refused
   * (`unknownSession`) unless `session` is live and `principal`'s, exactly like the MCP endpoint
   * refuses another principal's session id; `notReached` when the session has no connection of
   * its own to a per-user `server`; `hidden` when the session does not see it now (its enablement
   * or its access rules hide it): nothing is held and no connection opens, so a hidden upstream
   * cannot be made to judge a token.
   */
  set(session: string, principal: string | undefined, server: string, token: string): SetTokenOutcome {
    const record = this.sessions.get(session);
    if (record === undefined || record.principal !== principal) return 'unknownSession';
    if (!record.servers.has(server)) return 'notReached';
    if (!record.hooks.visible(server)) return 'hidden';
    if (Buffer.byteLength(token, 'utf8') > MAX_UPSTREAM_TOKEN_LENGTH) throw new RangeError('token over the size limit');
    record.tokens.set(server, token);
    record.refusals.delete(server);
    record.refused.delete(server);
    this.changed(record, server);
    return 'accepted';
  }

  /** Opens `session`'s connection to `server` with its token (after `set`). */
  reconnect(session: string, server: string): Promise<void> {
    const record = this.sessions.get(session);
    if (record === undefined) return Promise.reject(new UpstreamError('UPSTREAM_UNAVAILABLE', server, 'the session ended'));
    return record.hooks.reconnect(server);
  }

  /** True when `session` holds a token for `server`. */
  has(session: string, server: string): boolean {
    return this.sessions.get(session)?.tokens.has(server) === true;
  }

  /** The token `session` holds for `server` now (only to tell later whether it is still that one). */
  tokenOf(session: string, server: string): string | undefined {
    return this.sessions.get(session)?.tokens.get(server);
  }

  /**
   * The upstream refused `token` (HTTP 401; undefined: whichever is held): it is dropped if it is
   * still the one held, and `auth`, when the refusal named protected resource metadata, is what
   * the session's list shows.
   */
  refused(session: string, server: string, token: string | undefined, auth?: UpstreamAuthRequired): void {
    const record = this.sessions.get(session);
    if (record === undefined) return;
    const held = record.tokens.get(server);
    // A refusal of a token replaced since says nothing of the one held now.
    if (auth !== undefined && (token === undefined || held === undefined || held === token)) record.refusals.set(server, auth);
    if (held !== undefined && (token === undefined || held === token)) {
      record.tokens.delete(server);
      this.changed(record, server);
    } else if (auth !== undefined) this.announce();
  }

  /** True when the upstream answered 401 to `token`, `session`'s token for `server` when a call went out (not since set again). */
  wasRefused(session: string, server: string, token: string): boolean {
    return this.sessions.get(session)?.refused.get(server) === token;
  }

  /**
   * Why `session` holds no token for `server` when the upstream refused the last one it gave
   * (on a call or on the connection's own stream; none set since): the challenge's reason, or
   * `expired` for a bare 401. Undefined when it never gave one, or gave a new one since.
   */
  refusalOf(session: string, server: string): AuthChallenge['reason'] | undefined {
    const record = this.sessions.get(session);
    if (record === undefined || record.tokens.has(server)) return undefined;
    const auth = record.refusals.get(server);
    if (auth !== undefined) return auth.challenge.reason;
    return record.refused.has(server) ? 'expired' : undefined;
  }

  /**
   * Drops every session's token for `server` (a reload restarts it under a new configuration —
   * perhaps another URL — or removes it): a token was given for the upstream as it was, and is
   * never sent to what the server is now. Each session holding one hears its lists changed and
   * shows `authRequired` until it authenticates again.
   */
  dropServer(server: string): void {
    let dropped = false;
    for (const record of this.sessions.values()) {
      record.refusals.delete(server);
      record.refused.delete(server);
      if (!record.tokens.delete(server)) continue;
      dropped = true;
      record.hooks.changed(server);
    }
    if (dropped) this.announce();
  }

  /** What `session`'s list shows of per-user `server`; undefined when the session does not reach it. */
  view(session: string, server: string): UserServerView | undefined {
    const record = this.sessions.get(session);
    if (record === undefined || !record.servers.has(server)) return undefined;
    return { hasToken: record.tokens.has(server), refusal: record.refusals.get(server), connection: record.hooks.connection(server) };
  }

  /**
   * The token source of `session`'s own connection to `server`: the token held now, read at each
   * request (so a replaced token is sent from the next request on); none held rejects with
   * `UPSTREAM_AUTH_REQUIRED`, and a 401 drops it.
   */
  sourceFor(session: string, server: string): UpstreamTokenSource {
    return {
      token: () => {
        const token = this.sessions.get(session)?.tokens.get(server);
        return token === undefined ? Promise.reject(missingToken(server)) : Promise.resolve(token);
      },
      invalidate: (token, refusal) => {
        this.sessions.get(session)?.refused.set(server, token);
        this.refused(session, server, token, refusal);
      },
    };
  }

  /** Tokens held now, over every session (a gauge; never their values). */
  get size(): number {
    let count = 0;
    for (const record of this.sessions.values()) count += record.tokens.size;
    return count;
  }

  /** Told after any session's token or refusal changed (the customisation list rebuilds). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A session's own connection to a per-user server changed state: the list rebuilds. */
  noteConnection(): void {
    this.announce();
  }

  private changed(record: UserSession, server: string): void {
    record.hooks.changed(server);
    this.announce();
  }

  private announce(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** A per-user server asked for with no token of the session's: the client must send one. */
export function missingToken(server: string): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_AUTH_REQUIRED',
    server,
    'takes each user\'s own credential and this session has none (or the upstream refused it): send one with POST <MCP path>/customizations/authenticate {"id", "token"}',
  );
}

/**
 * A call of a session whose token for `server` the upstream refused (`reason`, as its challenge
 * said; `expired` for a bare 401): the token is gone, and the client must send a new one.
 */
export function credentialRefused(server: string, reason: AuthChallenge['reason']): GatewayError {
  return new GatewayError(
    'UPSTREAM_AUTH_REQUIRED',
    `upstream "${server}" refused this session's credential (${reason}); it was dropped: send a new one with POST <MCP path>/customizations/authenticate {"id", "token"}`,
    { server, data: { reason } },
  );
}

/**
 * A 2026-era (sessionless) request for a per-user server: a user's token lives on a 2025
 * session's own connection only, and a sessionless request has none to carry it.
 */
export function sessionNeeded(server: string): GatewayError {
  return new GatewayError(
    'INVALID_REQUEST',
    `server "${server}" takes each user's own credential, which only a 2025-era session holds: initialize a session to use it`,
    { server },
  );
}

/** True for a server whose upstream takes each user's own token (`upstreamAuth.kind: "perUser"`). */
export function takesUserTokens(config: ServerConfig): boolean {
  return config.transport !== 'stdio' && config.upstreamAuth?.kind === 'perUser';
}
