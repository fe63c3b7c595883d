/**
 * Bridges a 2025-era upstream's push-style server→client requests (sampling, elicitation, roots
 * during a call) to a 2026-era client, which has no server→client request channel: the client's
 * call ends with an `input_required` result carrying the requests, while the upstream call stays
 * suspended; the client's retry (same call, plus `inputResponses` and our `requestState`) answers
 * the upstream's requests and the call continues — to its result, or to another round.
 *
 * `requestState` is attacker-controlled input (spec: basic/patterns/mrtr): ours is an unguessable
 * random token naming a suspended call in a bounded map, never data we trust, and it resumes the
 * call only for the principal that started it (another principal holding the token is answered
 * as if it were unknown: a suspended call's result is its starter's alone). A call nobody resumes
 * is abandoned after `ttlMs`, which cancels the upstream request and frees its connection.
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../errors.js';
import type { DownstreamSink, RpcMessage } from '../rpc/sink.js';

type Result = Record<string, unknown>;

export interface InputBridgeOptions {
  /** Most suspended calls at once; the least recently suspended is abandoned beyond it. */
  max: number;
  /** How long a suspended call waits for the client's retry. */
  ttlMs: number;
}

interface Waiting {
  request: RpcMessage;
  resolve(result: Result): void;
  reject(error: Error): void;
}

interface SuspendedCall {
  /** Who started the call (undefined without authentication); only they may resume it. */
  principal: string | undefined;
  result: Promise<Result>;
  waiting: Map<string, Waiting>;
  /** Notifications go to the stream of the round being served. */
  sink: DownstreamSink;
  controller: AbortController;
  nextKey: number;
  /** Resolves when the upstream asks for input (a new round must be answered). */
  inputNeeded: Promise<void>;
  signalInput(): void;
}

export type UpstreamCall = (sink: DownstreamSink, signal: AbortSignal) => Promise<Result>;

/** The bridge as the requests of one principal see it. */
export interface InputRounds {
  /** True when `state` names a call the bridge suspended (whoever started it). */
  owns(state: unknown): state is string;
  start(sink: DownstreamSink, signal: AbortSignal, call: UpstreamCall): Promise<Result>;
  resume(state: string, inputResponses: unknown, sink: DownstreamSink, signal: AbortSignal): Promise<Result>;
}

export class InputBridge {
  private readonly suspended: LRUCache<string, SuspendedCall>;

  constructor(options: InputBridgeOptions) {
    this.suspended = new LRUCache<string, SuspendedCall>({
      max: options.max,
      ttl: options.ttlMs,
      ttlAutopurge: true,
      dispose: (call, _token, reason) => {
        // Taken back for a retry: the call goes on. Anything else abandons it: the upstream's
        // requests are answered with the error (so it can finish, and answer the cancelled call),
        // and the call is cancelled.
        if (reason === 'delete') return;
        const error = new GatewayError('UPSTREAM_TIMEOUT', 'input was not provided in time');
        for (const waiting of call.waiting.values()) waiting.reject(error);
        call.waiting.clear();
        call.controller.abort(error);
      },
    });
  }

  /** True when `state` names a call this bridge suspended. */
  owns(state: unknown): state is string {
    return typeof state === 'string' && this.suspended.has(state);
  }

  /** This bridge for the requests of `principal` (undefined without authentication). */
  for(principal: string | undefined): InputRounds {
    return {
      owns: (state): state is string => this.owns(state),
      start: (sink, signal, call) => this.start(sink, signal, call, principal),
      resume: (state, inputResponses, sink, signal) => this.resume(state, inputResponses, sink, signal, principal),
    };
  }

  /** Starts an upstream call on behalf of a 2026 client of `principal`. */
  start(sink: DownstreamSink, signal: AbortSignal, call: UpstreamCall, principal?: string): Promise<Result> {
    const suspended = this.create(sink, principal);
    suspended.result = call(this.bridgeSink(suspended), suspended.controller.signal);
    return this.serve(suspended, signal);
  }

  /** Continues a suspended call of `principal` with the client's answers. */
  resume(state: string, inputResponses: unknown, sink: DownstreamSink, signal: AbortSignal, principal?: string): Promise<Result> {
    const suspended = this.suspended.peek(state);
    if (suspended === undefined || suspended.principal !== principal) {
      throw new GatewayError('INVALID_PARAMS', 'requestState is unknown or expired; start the call again');
    }
    this.suspended.delete(state);
    suspended.sink = sink;
    const responses = (typeof inputResponses === 'object' && inputResponses !== null ? inputResponses : {}) as Record<string, unknown>;
    for (const [key, waiting] of suspended.waiting) {
      const response = responses[key];
      if (typeof response !== 'object' || response === null) continue;
      suspended.waiting.delete(key);
      waiting.resolve(response as Result);
    }
    return this.serve(suspended, signal);
  }

  private create(sink: DownstreamSink, principal: string | undefined): SuspendedCall {
    let signalInput = () => undefined as void;
    const call: SuspendedCall = {
      principal,
      result: Promise.resolve({}),
      waiting: new Map(),
      sink,
      controller: new AbortController(),
      nextKey: 1,
      inputNeeded: new Promise<void>((resolve) => (signalInput = resolve)),
      signalInput: () => signalInput(),
    };
    return call;
  }

  private bridgeSink(call: SuspendedCall): DownstreamSink {
    return {
      canRequest: true,
      // The client of the round being served: each 2026 request declares its own.
      get clientCapabilities() {
        return call.sink.clientCapabilities;
      },
      notify: (message) => call.sink.notify(message),
      request: (message, signal) =>
        new Promise<Result>((resolve, reject) => {
          const key = `input-${call.nextKey++}`;
          call.waiting.set(key, { request: message, resolve, reject });
          signal?.addEventListener('abort', () => {
            call.waiting.delete(key);
            reject(new GatewayError('UPSTREAM_UNAVAILABLE', 'the upstream withdrew its request'));
          });
          call.signalInput();
        }),
    };
  }

  /** Waits for the call's result or its next need for input, whichever comes first. */
  private async serve(call: SuspendedCall, signal: AbortSignal): Promise<Result> {
    const onAbort = () => call.controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (call.waiting.size > 0) return this.suspend(call);
        call.inputNeeded = new Promise<void>((resolve) => {
          call.signalInput = resolve;
        });
        const outcome = await Promise.race([call.result.then(() => 'done' as const), call.inputNeeded.then(() => 'input' as const)]);
        if (outcome === 'done') return await call.result;
        // Let the upstream ask for everything it needs this round before answering the client.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private suspend(call: SuspendedCall): Result {
    const token = randomBytes(24).toString('base64url');
    // Keys come from the upstream: own properties, never a prototype (`__proto__`).
    const inputRequests: Record<string, RpcMessage> = Object.fromEntries([...call.waiting].map(([key, waiting]) => [key, waiting.request]));
    this.suspended.set(token, call);
    call.result.catch(() => undefined); // settled later by the retry, or abandoned
    return { resultType: 'input_required', inputRequests, requestState: token };
  }
}
