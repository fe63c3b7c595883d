/**
 * The span exporter: OTLP/HTTP (OpenTelemetry Protocol, "OTLP/HTTP") with the SDK's own
 * serializers (`@opentelemetry/otlp-transformer`, the same ones `exporter-trace-otlp-http` uses),
 * sent through a `post` function the composition root builds on the egress guard, so the
 * collector's address is checked like every other URL the gateway dials (src/net). The stock
 * exporter dials with `node:http` agents that the guard cannot see, hence this one.
 *
 * Failures cost spans, never requests: an export that fails is dropped (the batch processor
 * bounds what waits) and reported at warn at most once a minute, with the status or error code
 * only — never the URL or a header value.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger } from './logger.js';

/** One export request: the encoded body and its content type; resolves with the HTTP status. */
export type OtlpPost = (body: Uint8Array, contentType: string) => Promise<number>;

export interface OtlpExporterOptions {
  protocol: 'http/protobuf' | 'http/json';
  post: OtlpPost;
  logger: Logger;
}

const REPORT_EVERY_MS = 60_000;

export class OtlpSpanExporter implements SpanExporter {
  private readonly serializer;
  private readonly contentType: string;
  private readonly inFlight = new Set<Promise<void>>();
  private lastReport = -Infinity;
  private stopped = false;

  constructor(private readonly options: OtlpExporterOptions) {
    const json = options.protocol === 'http/json';
    this.serializer = json ? JsonTraceSerializer : ProtobufTraceSerializer;
    this.contentType = json ? 'application/json' : 'application/x-protobuf';
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('exporter stopped') });
      return;
    }
    const body = this.serializer.serializeRequest(spans);
    if (body === undefined) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error('spans could not be encoded') });
      return;
    }
    const sent = this.options
      .post(body, this.contentType)
      .then(
        (status) => {
          if (status >= 200 && status < 300) return resultCallback({ code: ExportResultCode.SUCCESS });
          this.report({ status });
          resultCallback({ code: ExportResultCode.FAILED, error: new Error(`collector answered ${status}`) });
        },
        (error: unknown) => {
          const code = (error as { code?: unknown }).code;
          this.report({ reason: typeof code === 'string' ? code : 'request failed' });
          resultCallback({ code: ExportResultCode.FAILED, error: new Error('export request failed') });
        },
      )
      .finally(() => this.inFlight.delete(sent));
    this.inFlight.add(sent);
  }

  /** Resolves once every export already sent has been answered (or failed). */
  async forceFlush(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.stopped = true;
  }

  private report(fields: Record<string, unknown>): void {
    const now = performance.now();
    if (now - this.lastReport < REPORT_EVERY_MS) return;
    this.lastReport = now;
    this.options.logger.warn(fields, 'trace export failed; spans dropped');
  }
}
