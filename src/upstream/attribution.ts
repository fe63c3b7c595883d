/**
 * Which downstream each message an upstream originates belongs to. A message is attributed to a
 * call only when that call is provably its cause (docs/architecture.md, "Attribution"):
 * - progress, by the progress token the link chose for that call alone;
 * - anything else, on a link that serves one call at a time (a pooled lease) or one session,
 *   when that call's request is the only one open on the connection — every earlier request
 *   answered, none abandoned (peer.ts) — so the upstream has no other request it could be
 *   working on. stdio carries no related-request id at all: one ordered pipe is what it proves.
 * Otherwise the message goes to the link's owner (a 2025 session's standalone stream), or, with
 * no owner, is dropped (a notification) or refused (a request) and logged at debug, never guessed.
 *
 * Invariant: nothing of principal A ever reaches principal B. A pooled link is leased to one call
 * at a time and only while no request is open on it (lease-pool.ts); a call that ends without
 * its answer (cancelled, timed out) leaves its request open, abandoned, until the upstream answers
 * it or the connection is replaced. So a message that arrives while B's call is the sole open
 * request was sent for B's call, and one that arrives while A's abandoned request is open goes
 * nowhere. A session's own connection has one owner and serves one principal.
 */
import type { Logger } from '../observability/logger.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';

/** One call forwarded on the link. */
export interface Call {
  readonly sink: DownstreamSink;
  /** Messages relayed for this call, in arrival order; awaited before its result is returned. */
  chain: Promise<void>;
  /** Our progress token upstream, in place of the client's; absent when the client asked for none. */
  readonly progressToken?: string;
}

/** Where one upstream message goes: a call's stream (in that call's order), or the owner's. */
interface Target {
  sink: DownstreamSink;
  call?: Call;
}

export interface AttributionOptions {
  /** Receives what no call can be credited with (a 2025 session's standalone stream). */
  owner?: DownstreamSink | undefined;
  /** The link serves one call at a time (a pooled lease). */
  exclusive: boolean;
  /** The call whose request is the only one open on the connection, not abandoned (peer.ts). */
  soleLiveCall(): Call | undefined;
  logger: Logger;
}

export class Attribution {
  private readonly owner: DownstreamSink | undefined;
  private readonly exclusive: boolean;
  private readonly soleLiveCall: () => Call | undefined;
  private readonly logger: Logger;
  private readonly inFlight = new Set<Call>();
  /** Our progress tokens → the call they belong to and the client's own token. */
  private readonly byProgressToken = new Map<string, { call: Call; clientToken: string | number }>();
  private nextProgressToken = 1;
  /** Where messages owned by no call go, in order. */
  private ownerChain: Promise<void> = Promise.resolve();

  constructor(options: AttributionOptions) {
    this.owner = options.owner;
    this.exclusive = options.exclusive;
    this.soleLiveCall = options.soleLiveCall;
    this.logger = options.logger;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** A call starts; `clientToken` is the downstream client's progress token, if it sent one. */
  begin(sink: DownstreamSink, clientToken: string | number | undefined): Call {
    if (clientToken === undefined) {
      const call: Call = { sink, chain: Promise.resolve() };
      this.inFlight.add(call);
      return call;
    }
    const progressToken = `portcullis-${this.nextProgressToken++}`;
    const call: Call = { sink, chain: Promise.resolve(), progressToken };
    this.byProgressToken.set(progressToken, { call, clientToken });
    this.inFlight.add(call);
    return call;
  }

  /** The call ended (answered or not): nothing arriving later is attributed to it. */
  end(call: Call): void {
    this.inFlight.delete(call);
    if (call.progressToken !== undefined) this.byProgressToken.delete(call.progressToken);
  }

  /**
   * A call-level notification, as it arrives (the peer hands them on synchronously, in arrival
   * order, before the response that follows them): progress goes to its call under the client's
   * own token; anything else to the call that provably caused it, or the owner, or nowhere.
   */
  notification(method: string, params: Record<string, unknown> | undefined): void {
    if (method === 'notifications/progress') {
      const owner = this.byProgressToken.get(String(params?.progressToken));
      if (owner !== undefined) {
        this.relay({ sink: owner.call.sink, call: owner.call }, { method, params: { ...params, progressToken: owner.clientToken } });
      }
      return;
    }
    const target = this.attribute();
    if (target === undefined) {
      this.logger.debug({ method }, 'dropped an upstream notification that no call owns');
      return;
    }
    this.relay(target, params === undefined ? { method } : { method, params });
  }

  /** Where a server→client request that arrives now goes, judged on arrival; undefined: nowhere. */
  requestSink(method: string): DownstreamSink | undefined {
    const sink = this.attribute()?.sink;
    if (sink === undefined) this.logger.debug({ method }, 'refused an upstream request that no call owns');
    return sink;
  }

  /**
   * Where something the upstream originated now goes, or undefined to drop it: the call whose
   * request is the only one open, on an exclusive or owned link; else the owner; else nothing —
   * on a shared link the sole open request may be another client's than the work that sent it.
   */
  private attribute(): Target | undefined {
    if (this.exclusive || this.owner !== undefined) {
      const call = this.soleLiveCall();
      if (call !== undefined && this.inFlight.has(call)) return { sink: call.sink, call };
    }
    return this.owner === undefined ? undefined : { sink: this.owner };
  }

  /** Relays one notification in order: behind everything already relayed to the same place. */
  private relay(target: Target, message: RpcMessage): void {
    const send = () => target.sink.notify(message).catch(() => undefined);
    if (target.call !== undefined) target.call.chain = target.call.chain.then(send);
    else this.ownerChain = this.ownerChain.then(send);
  }
}
