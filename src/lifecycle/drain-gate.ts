/**
 * The gateway's front door while it drains (docs/operations.md, "Graceful drain"). Wrapped around
 * the HTTP handler, it:
 *
 * - refuses every request that arrives once draining has begun (503, JSON-RPC -32001
 *   `SHUTTING_DOWN`, `Retry-After`, `Connection: close`), so clients and load balancers learn at
 *   once to go elsewhere instead of timing out on a closed port — except `GET /healthz` and a
 *   2025 session's POSTs and DELETE, which may carry what an in-flight call waits for (the
 *   endpoint refuses any new request inside them);
 * - counts the calls in flight: a POST whose answer is not complete yet (its handler still
 *   running, or its SSE answer still open). A 2026 `subscriptions/listen` POST is a stream, not a
 *   call (MCP 2026-07-28 requires its `Mcp-Method` header, which the SDK checks against the body);
 * - keeps every open SSE answer closable, so the streams still open when the calls are done (a
 *   2025 session's standalone GET, a listen stream, a call past the deadline) are ended and their
 *   clients resume with `Last-Event-ID` — on another replica when the Redis store is shared.
 */
import { errorResponse, GatewayError } from '../errors.js';

export type FetchHandler = (request: Request, env: unknown) => Response | Promise<Response>;

/** When a client refused during drain should try again (another replica usually answers at once). */
const RETRY_AFTER_MS = 1_000;

/** True for a request that is one or more JSON-RPC calls the gateway must finish before it exits. */
function isCall(request: Request): boolean {
  return request.method === 'POST' && request.headers.get('mcp-method') !== 'subscriptions/listen';
}

/**
 * What still passes once draining began: liveness, and a 2025 session's POSTs and DELETE. A
 * session's POST may carry the answer an in-flight call waits for (elicitation, sampling, roots)
 * or a cancellation; the endpoint refuses any new request in it (`refusal`, below).
 */
function passesWhileDraining(request: Request): boolean {
  if (request.method === 'GET') return new URL(request.url).pathname === '/healthz';
  return (request.method === 'POST' || request.method === 'DELETE') && request.headers.has('mcp-session-id');
}

function isEventStream(response: Response): boolean {
  return response.body !== null && (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
}

export class DrainGate {
  private isDraining = false;
  private calls = 0;
  private readonly streams = new Set<() => void>();
  private readonly idleWaiters = new Set<() => void>();

  get draining(): boolean {
    return this.isDraining;
  }

  /** Calls whose answer is not complete yet. */
  get inFlight(): number {
    return this.calls;
  }

  /** SSE answers open right now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** The handler behind the gate. */
  wrap(handler: FetchHandler): FetchHandler {
    return async (request, env) => {
      if (this.isDraining && !passesWhileDraining(request)) return errorResponse(this.refusal(), { headers: { connection: 'close' } });
      const counted = isCall(request);
      if (counted) this.calls += 1;
      let response: Response;
      try {
        response = await handler(request, env);
      } catch (error) {
        if (counted) this.callDone();
        throw error;
      }
      if (!isEventStream(response)) {
        if (counted) this.callDone();
        return response;
      }
      return this.closable(response, counted);
    };
  }

  /** From now on every new request is refused; what is in flight carries on. */
  begin(): void {
    this.isDraining = true;
  }

  /** Resolves `true` once no call is in flight, or `false` when `timeoutMs` passes first. */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.calls === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.idleWaiters.delete(done);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idleWaiters.delete(done);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      this.idleWaiters.add(done);
    });
  }

  /** Ends every SSE answer still open; returns how many were. Their clients see the stream end and resume. */
  closeStreams(): number {
    const closers = [...this.streams];
    this.streams.clear();
    for (const close of closers) close();
    return closers.length;
  }

  /** The refusal of new work while draining (503, -32001 `SHUTTING_DOWN`, retry shortly). */
  refusal(): GatewayError {
    return new GatewayError('SHUTTING_DOWN', 'the gateway is shutting down; retry on another replica or once it has restarted', {
      retryAfterMs: RETRY_AFTER_MS,
    });
  }

  private callDone(): void {
    this.calls -= 1;
    if (this.calls === 0) for (const waiter of [...this.idleWaiters]) waiter();
  }

  /** The same answer over a body this gate can end; the call it carries is done when the body is. */
  private closable(response: Response, counted: boolean): Response {
    const source = response.body!.getReader();
    let finished = false;
    let ended = false;
    let close = (): void => undefined;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.streams.delete(close);
      if (counted) this.callDone();
    };
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        close = () => {
          ended = true;
          finish();
          source.cancel().catch(() => undefined);
          try {
            controller.close();
          } catch {
            // already closed or errored
          }
        };
        this.streams.add(close);
      },
      pull: async (controller) => {
        try {
          const chunk = await source.read();
          if (ended) return; // closeStreams ended it while this read waited
          if (chunk.done) {
            finish();
            controller.close();
          } else controller.enqueue(chunk.value);
        } catch (error) {
          finish();
          controller.error(error);
        }
      },
      cancel: async (reason) => {
        finish();
        await source.cancel(reason).catch(() => undefined);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}
