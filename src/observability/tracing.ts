/**
 * OpenTelemetry traces of the gateway (docs/operations.md, "Traces"), following the OpenTelemetry
 * semantic conventions for MCP: a server span per MCP request the gateway answers and a client
 * span per request it sends upstream, named `{mcp.method.name} {target}`.
 *
 * Context: the W3C `traceparent` of the inbound request (its `params._meta.traceparent`, else the
 * HTTP header) is the server span's remote parent. The server span is carried through the
 * request's async work in an `AsyncLocalStorage` of this module, so the upstream link finds it
 * without a parameter through every layer ({@link startUpstreamSpan}); the client span's context
 * goes upstream as `params._meta.traceparent` (every transport, as the conventions recommend)
 * and, on HTTP, as the `traceparent` header ({@link currentUpstreamHeaders}).
 *
 * Cost when off: no `Tracing` exists, nothing is stored, and the link's lookup finds no store —
 * no span object, no allocation on the request path.
 *
 * What a span never holds: the session id itself (only its keyed tag, `session-tag.ts`),
 * arguments, results, or header values. Attribute values are cut at 512 characters.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type TextMapGetter, type TextMapSetter, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

/** Attribute names of the OpenTelemetry MCP semantic conventions (development status). */
export const MCP_ATTRIBUTES = Object.freeze({
  method: 'mcp.method.name',
  session: 'mcp.session.id',
  protocolVersion: 'mcp.protocol.version',
  resourceUri: 'mcp.resource.uri',
  requestId: 'jsonrpc.request.id',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
  operation: 'gen_ai.operation.name',
  statusCode: 'rpc.response.status_code',
  /** The gateway's own: the configured upstream a client span went to. */
  upstream: 'portcullis.upstream',
});

export interface TracingOptions {
  serviceName: string;
  serviceVersion: string;
  /** Share of root traces recorded; a sampled parent's decision is followed either way. */
  sampleRatio: number;
  exporter: SpanExporter;
  /** Batching delay (default 2 s). */
  scheduledDelayMillis?: number;
  /** Longest one export may take before the batch is given up (default 10 s). */
  exportTimeoutMillis?: number;
}

/** What the inbound request says about itself; everything optional is left out when absent. */
export interface RequestSpanInfo {
  method: string;
  /** The session's keyed tag (never the id). */
  sessionTag?: string;
  requestId?: string | number;
  /** `tools/call` / `prompts/get` name as the client sent it. */
  name?: unknown;
  uri?: unknown;
  /** The request's `params._meta` (its `traceparent`/`tracestate` win over the header's). */
  meta?: Record<string, unknown>;
  /** The HTTP request's headers (for `traceparent`/`tracestate`). */
  headers?: Headers;
  protocolVersion?: string;
}

/** How a finished request or call went: absent is success. */
export interface SpanFailure {
  /** The JSON-RPC error code answered. */
  code: number;
  /** A low-cardinality error type (the gateway's error code, or the JSON-RPC code). */
  type: string;
}

/**
 * What one inbound request's async work carries: its server span (tracing on) and, for the audit
 * log, the upstream that served it (noted by the link).
 */
export interface RequestNote {
  tracer?: Tracer;
  context?: Context;
  /** The client span of the upstream call under way, for the HTTP `traceparent` header. */
  upstream?: Record<string, string>;
  /** The last upstream the request was sent to. */
  server?: string;
}
type ActiveTrace = RequestNote;

const active = new AsyncLocalStorage<ActiveTrace>();
const propagator = new W3CTraceContextPropagator();
const MAX_ATTRIBUTE_CHARS = 512;
/** A name goes into the span name only when it is short and plain (span names must stay low-cardinality). */
const PLAIN_NAME = /^[A-Za-z0-9_.\-/]{1,64}$/;

const carrierGetter: TextMapGetter<{ meta?: Record<string, unknown>; headers?: Headers }> = {
  keys: () => ['traceparent', 'tracestate'],
  get(carrier, key) {
    const fromMeta = carrier.meta?.[key];
    if (typeof fromMeta === 'string') return fromMeta;
    // The header counts only when the message carries no traceparent of its own.
    if (typeof carrier.meta?.traceparent === 'string') return undefined;
    return carrier.headers?.get(key) ?? undefined;
  },
};

const recordSetter: TextMapSetter<Record<string, string>> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};

function spanName(method: string, name: unknown): string {
  return typeof name === 'string' && PLAIN_NAME.test(name) ? `${method} ${name}` : method;
}

function targetAttributes(method: string, name: unknown, uri: unknown): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (typeof name === 'string') {
    if (method === 'tools/call') {
      attributes[MCP_ATTRIBUTES.toolName] = name;
      attributes[MCP_ATTRIBUTES.operation] = 'execute_tool';
    } else if (method === 'prompts/get') attributes[MCP_ATTRIBUTES.promptName] = name;
  }
  if (typeof uri === 'string') attributes[MCP_ATTRIBUTES.resourceUri] = uri;
  return attributes;
}

function finish(span: Span, failure: SpanFailure | undefined): void {
  if (failure !== undefined) {
    span.setAttribute(ATTR_ERROR_TYPE, failure.type);
    span.setAttribute(MCP_ATTRIBUTES.statusCode, String(failure.code));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** One inbound request's server span. */
export class RequestSpan {
  constructor(
    private readonly span: Span,
    private readonly store: ActiveTrace,
  ) {}

  /** Runs the request's work with this span as the parent of every upstream call in it. */
  run<T>(work: () => Promise<T>): Promise<T> {
    return active.run(this.store, work);
  }

  /** The upstream the request was sent to, once the link noted it. */
  get server(): string | undefined {
    return this.store.server;
  }

  end(failure?: SpanFailure): void {
    finish(this.span, failure);
  }
}

/** One upstream call's client span, with the context to send upstream. */
export class UpstreamSpan {
  constructor(
    private readonly span: Span,
    private readonly store: ActiveTrace,
    /** `traceparent` (and `tracestate` when set) for `params._meta` and the HTTP header. */
    readonly carrier: Readonly<Record<string, string>>,
  ) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    return active.run(this.store, work);
  }

  end(failure?: SpanFailure): void {
    finish(this.span, failure);
  }
}

/**
 * A client span for an upstream call made inside a traced request, or `undefined` (tracing off,
 * or a call no request caused — a list refresh, a health probe).
 */
export function startUpstreamSpan(server: string, method: string, params: Record<string, unknown> | undefined): UpstreamSpan | undefined {
  const parent = active.getStore();
  if (parent === undefined) return undefined;
  parent.server = server;
  if (parent.tracer === undefined || parent.context === undefined) return undefined;
  const span = parent.tracer.startSpan(
    spanName(method, params?.name),
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [MCP_ATTRIBUTES.method]: method,
        [MCP_ATTRIBUTES.upstream]: server,
        ...targetAttributes(method, params?.name, params?.uri),
      },
    },
    parent.context,
  );
  const context = trace.setSpan(parent.context, span);
  const carrier: Record<string, string> = {};
  propagator.inject(context, carrier, recordSetter);
  return new UpstreamSpan(span, { tracer: parent.tracer, context, upstream: carrier }, carrier);
}

/** Runs one request's work with `note` as its note (audit without tracing; `RequestSpan.run` with it). */
export function runNoted<T>(note: RequestNote, work: () => Promise<T>): Promise<T> {
  return active.run(note, work);
}

/** The trace headers for an HTTP exchange of the upstream call under way; `undefined` outside one. */
export function currentUpstreamHeaders(): Readonly<Record<string, string>> | undefined {
  return active.getStore()?.upstream;
}

export class Tracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;

  constructor(options: TracingOptions) {
    if (!(options.sampleRatio >= 0 && options.sampleRatio <= 1)) throw new TypeError('tracing: sampleRatio must be between 0 and 1');
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName, [ATTR_SERVICE_VERSION]: options.serviceVersion }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }),
      spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_CHARS, attributeCountLimit: 32, eventCountLimit: 16, linkCountLimit: 4 },
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: options.exporter,
          maxQueueSize: 2_048,
          maxExportBatchSize: 512,
          scheduledDelayMillis: options.scheduledDelayMillis ?? 2_000,
          exportTimeoutMillis: options.exportTimeoutMillis ?? 10_000,
        }),
      ],
    });
    // Never registered globally: gateways sharing a process keep their own spans.
    this.tracer = this.provider.getTracer('portcullis', options.serviceVersion);
  }

  /** The server span of one inbound MCP request, its remote parent taken from the request. */
  startRequest(info: RequestSpanInfo): RequestSpan {
    const parentContext = propagator.extract(ROOT_CONTEXT, { meta: info.meta, headers: info.headers }, carrierGetter);
    const attributes: Record<string, string> = { [MCP_ATTRIBUTES.method]: info.method, ...targetAttributes(info.method, info.name, info.uri) };
    if (info.sessionTag !== undefined) attributes[MCP_ATTRIBUTES.session] = info.sessionTag;
    if (info.requestId !== undefined) attributes[MCP_ATTRIBUTES.requestId] = String(info.requestId);
    if (info.protocolVersion !== undefined) attributes[MCP_ATTRIBUTES.protocolVersion] = info.protocolVersion;
    const span = this.tracer.startSpan(spanName(info.method, info.name), { kind: SpanKind.SERVER, attributes }, parentContext);
    return new RequestSpan(span, { tracer: this.tracer, context: trace.setSpan(parentContext, span) });
  }

  /** Exports every finished span still waiting (shutdown, tests). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  /** Flushes, then stops the exporter; spans started after this are dropped. */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}
