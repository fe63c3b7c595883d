/**
 * What one 2026 listen holds of the gateway's upstream resource subscriptions
 * (resource-listens.ts): its grant, and each URI subscription it shares with other listens on the
 * same connection.
 */
import type { ConnectionKey } from '../../upstream/principal-connections.js';

/** Receives one update for a URI the listen holds. */
export type UpdateDelivery = (uri: string, params: Record<string, unknown>) => void;

/** The upstream subscriptions one listen holds, from `open` until `release`. */
export interface ListenGrant {
  /** The URIs honoured, in the order the client named them. */
  readonly uris: readonly string[];
  /** Where this listen's updates go from now on (its stream). */
  attach(deliver: UpdateDelivery): void;
  /** The listen ended: its subscriptions go, each upstream one with the last listen holding it. */
  release(): void;
}

/** One URI subscribed upstream on one connection, and the listens that hold it. */
export interface Subscription {
  readonly id: string;
  readonly server: string;
  readonly uri: string;
  /** The principal connection it lives on; undefined: the server's primary. */
  readonly key: ConnectionKey | undefined;
  readonly grants: Set<Grant>;
  /** Settles true once subscribed upstream, false if that failed. */
  ready: Promise<boolean>;
  resubscribes: number;
}

export class Grant implements ListenGrant {
  uris: readonly string[] = [];
  readonly held: Subscription[] = [];
  deliver: UpdateDelivery | undefined;
  released = false;
  constructor(
    /** The principal whose share it counts against; undefined: the anonymous caller (no share). */
    readonly principal: string | undefined,
    private readonly onRelease: (grant: Grant) => void,
  ) {}

  attach(deliver: UpdateDelivery): void {
    this.deliver = deliver;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.deliver = undefined;
    this.onRelease(this);
  }
}
