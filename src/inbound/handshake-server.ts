/**
 * The SDK `Server` with a say in its handshake: the SDK builds the `initialize` (2025 era) and
 * `server/discover` (2026 era) results itself, from the instructions it was constructed with.
 * The gateway's answer depends on the asking client — its own persona (init option
 * `agentPersona`) — and carries gateway `_meta` (`portcullis/server`, an agent's `model`), so the
 * SDK's result is completed here, through the SDK's documented subclass hook `_wrapHandler`
 * (every registered handler passes through it, the SDK's own handshake handlers included).
 */
import { Server, type ServerContext } from '@modelcontextprotocol/server';

/** What the gateway adds to one handshake result. */
export interface HandshakeAnswer {
  /** Replaces the constructed instructions; absent: the SDK's result keeps its own. */
  readonly instructions?: string;
  /** Merged into the result's `_meta`. */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/**
 * Decides the answer from the client's `_meta` (request `_meta`, the 2026 envelope). Throws a
 * `ProtocolError` to refuse the handshake (a bad init option).
 */
export type Handshake = (clientMeta: Record<string, unknown> | undefined) => HandshakeAnswer;

const HANDSHAKE_METHODS = new Set(['initialize', 'server/discover']);

type Wrapped = Parameters<Server['_wrapHandler']>[1];

export class HandshakeServer extends Server {
  private handshake: Handshake | undefined;

  constructor(info: ConstructorParameters<typeof Server>[0], options: ConstructorParameters<typeof Server>[1], handshake: Handshake | undefined) {
    super(info, options);
    this.handshake = handshake;
  }

  protected override _wrapHandler(method: string, handler: Wrapped): Wrapped {
    const inner = super._wrapHandler(method, handler);
    if (!HANDSHAKE_METHODS.has(method)) return inner;
    return async (request, ctx) => {
      const result = (await inner(request, ctx)) as Record<string, unknown>;
      const handshake = this.handshake;
      if (handshake === undefined) return result as never;
      const answer = handshake(clientMetaOf(request as { params?: Record<string, unknown> }, ctx));
      const completed: Record<string, unknown> = { ...result };
      if (answer.instructions !== undefined) completed.instructions = answer.instructions;
      if (answer.meta !== undefined) completed._meta = { ...((result._meta as Record<string, unknown> | undefined) ?? {}), ...answer.meta };
      return completed as never;
    };
  }
}

function clientMetaOf(request: { params?: Record<string, unknown> }, ctx: ServerContext): Record<string, unknown> | undefined {
  const meta = {
    ...((request.params?._meta as Record<string, unknown> | undefined) ?? {}),
    ...(ctx.mcpReq._meta ?? {}),
    ...(ctx.mcpReq.envelope ?? {}),
  };
  return Object.keys(meta).length === 0 ? undefined : meta;
}
