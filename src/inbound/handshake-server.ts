/**
 * The SDK `Server` with the gateway's handshake answers: the SDK builds the `initialize` (2025
 * era) and `server/discover` (2026 era) results itself, from what it was constructed with; the
 * gateway's answer depends on the asking client (its persona, the endpoint's `_meta`) and is the
 * method table's (method-table.ts). The SDK's own handler still runs first, through the SDK's
 * documented subclass hook `_wrapHandler` (every registered handler passes through it), for what
 * it records: the client's capabilities and the negotiated version.
 */
import { Server, type ServerContext } from '@modelcontextprotocol/server';

const HANDSHAKE_METHODS = new Set(['initialize', 'server/discover']);

type Wrapped = Parameters<Server['_wrapHandler']>[1];

/** Answers one handshake request (the SDK has validated and recorded it). */
export type HandshakeAnswerer = (request: { method: string; params?: Record<string, unknown> }, ctx: ServerContext) => Promise<Record<string, unknown>>;

export class HandshakeServer extends Server {
  private readonly answer: HandshakeAnswerer;

  constructor(info: ConstructorParameters<typeof Server>[0], options: ConstructorParameters<typeof Server>[1], answer: HandshakeAnswerer) {
    super(info, options);
    this.answer = answer;
  }

  protected override _wrapHandler(method: string, handler: Wrapped): Wrapped {
    const inner = super._wrapHandler(method, handler);
    if (!HANDSHAKE_METHODS.has(method)) return inner;
    return async (request, ctx) => {
      await inner(request, ctx);
      return (await this.answer(request as never, ctx)) as never;
    };
  }
}
