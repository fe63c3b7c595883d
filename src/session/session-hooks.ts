/**
 * What an endpoint's 2025-era sessions may be shared through beyond this process: a small set of
 * hooks the endpoint calls at four moments of a session's life, whatever shares them. A gateway on
 * its own shares nothing (`LOCAL_SESSIONS`: the hooks change nothing); a replica of a cluster
 * (src/cluster/) finds sessions held by other replicas, takes over those whose owner died, records
 * each session it opens and each request in flight. The endpoint has no other knowledge of it.
 */
import type { BucketStore } from '../policy/request-limits.js';
import type { LoadedNamesStore } from '../naming/loaded-names.js';
import type { GatewayEventStore } from './event-store.js';

/** A 2025-era session as the hooks see it (inbound/session-2025.ts's `Session2025` is one). */
export interface SharedSession {
  readonly id: string;
  readonly principal: string | undefined;
  readonly initialised: boolean;
  handle(request: Request, parsedBody?: unknown): Promise<Response>;
  close(): Promise<void>;
}

/** A request naming a session id the endpoint does not hold. */
export interface UnknownSession<S extends SharedSession> {
  request: Request;
  sessionId: string;
  principal: string | undefined;
  /** The key of the access profile the request's token matched (forwarded with it); undefined without access rules. */
  access: string | undefined;
  parsedBody: unknown;
  /** Builds and starts a session of the endpoint under `sessionId`, admitted against the session budget. */
  adopt(principal: string | undefined, sessionId: string): Promise<S>;
  /** Closes a session here without touching what is shared of it (it is held elsewhere now). */
  drop(sessionId: string): void;
}

/** The hooks of one endpoint (`aggregate`, `servers/<name>`). */
export interface SessionHooks {
  /** A 2025-era request to answer at once rather than serve (a forged forward: 403); undefined: serve it. */
  refuse(request: Request): Response | undefined;
  /**
   * For a session id not held here: the answer to give (forwarded to its owner, 404, 503), the
   * session rebuilt here by `adopt`, or undefined when nothing is known of it.
   */
  unknown<S extends SharedSession>(args: UnknownSession<S>): Promise<Response | S | undefined>;
  /** A session was initialised here; resolves before the client learns its id. `drop` closes it here. */
  opened(session: SharedSession, initializeBody: unknown, drop: () => void): Promise<void>;
  /** The response (2xx) of an initialised session to request `body`, on its way out. */
  response(sessionId: string, body: unknown, response: Response): Response;
}

/** How this gateway shares its sessions: built at start, started once the listener is bound. */
export interface SessionSharing {
  /** The event store sessions use: `inner`, or `inner` seen through the sharing's hooks. */
  wrapStore(inner: GatewayEventStore): GatewayEventStore;
  forEndpoint(label: string): SessionHooks;
  /** Joins the other replicas; `boundUrl` is where this one answers. */
  start(boundUrl: string): Promise<void>;
  close(): Promise<void>;
  /** Rate-limit buckets the replicas share (policy `rateLimits`); absent: each process its own. */
  rateBuckets?(): BucketStore;
  /** The tools 2026-era callers loaded, shared by the replicas; absent: each process its own. */
  loadedNames?(): LoadedNamesStore;
  /**
   * The principal a request forwarded by another replica proves, or undefined when the request
   * does not claim to be forwarded (absent: no request ever is).
   */
  forwardedPrincipal?(request: Request): { ok: true; principal: string | undefined } | { ok: false; reason: string } | undefined;
}

/** The hooks of sessions held by this process alone: nothing refused, nothing else known, nothing recorded. */
export const LOCAL_HOOKS: SessionHooks = Object.freeze({
  refuse: () => undefined,
  unknown: async () => undefined,
  opened: async () => undefined,
  response: (_sessionId: string, _body: unknown, response: Response) => response,
});

/** A gateway on its own: its sessions live and die in this process. */
export const LOCAL_SESSIONS: SessionSharing = Object.freeze({
  wrapStore: (inner: GatewayEventStore) => inner,
  forEndpoint: () => LOCAL_HOOKS,
  start: async () => undefined,
  close: async () => undefined,
});
