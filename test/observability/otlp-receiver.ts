/**
 * A real OTLP/HTTP traces receiver on 127.0.0.1 for tests: `POST /v1/traces` bodies in the JSON
 * encoding (OTLP/HTTP, "JSON Protobuf Encoding") decoded into spans; protobuf bodies are kept as
 * bytes. Answers 200 with an empty `ExportTraceServiceResponse`, as a collector does.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 2 server, 3 client (OTLP `SpanKind`). */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number };
  resource: Record<string, string | number | boolean>;
}

export interface ReceivedExport {
  contentType: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface OtlpReceiver {
  readonly url: string;
  readonly exports: ReceivedExport[];
  /** Every span of every JSON export so far. */
  spans(): ReceivedSpan[];
  /** Resolves once `predicate` holds for the spans received (checked on each export). */
  until(predicate: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };

function valueOf(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  return value.doubleValue ?? '';
}

function attributesOf(list: Array<{ key: string; value: AnyValue }> | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

function decode(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString('utf8')) as {
    resourceSpans?: Array<{
      resource?: { attributes?: Array<{ key: string; value: AnyValue }> };
      scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
    }>;
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        spans.push({
          traceId: String(span.traceId),
          spanId: String(span.spanId),
          parentSpanId: String(span.parentSpanId ?? ''),
          name: String(span.name),
          kind: Number(span.kind),
          attributes: attributesOf(span.attributes as Array<{ key: string; value: AnyValue }>),
          status: (span.status as { code?: number } | undefined) ?? {},
          resource,
        });
      }
    }
  }
  return spans;
}

/** `hang`: read each export and never answer (a collector that stopped responding). */
export async function startOtlpReceiver(options: { hang?: boolean } = {}): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const decoded: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      exports.push({ contentType: req.headers['content-type'], headers: req.headers, body });
      if (options.hang === true) {
        for (const wake of [...waiters]) wake();
        return;
      }
      if (req.url === '/v1/traces' && req.headers['content-type'] === 'application/json') decoded.push(...decode(body));
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' });
      res.end(req.headers['content-type'] === 'application/json' ? '{}' : '');
      for (const wake of [...waiters]) wake();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    exports,
    spans: () => [...decoded],
    until(predicate) {
      return new Promise((resolve) => {
        const check = () => {
          if (!predicate(decoded)) return;
          waiters.delete(check);
          resolve([...decoded]);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
