/**
 * Composition of the gateway's traces and audit log (docs/operations.md, "Traces" and "Audit
 * log"): settings resolved before anything starts (a bad `tracing` block or `OTEL_*` variable,
 * or an audit file that cannot be opened, stops the start with the field named), then the
 * exporter, the sink and, per endpoint, what its requests are observed with.
 */
import type { GatewayConfig } from '../config/schema.js';
import { resolveTracing, type TracingSettings } from '../config/tracing-settings.js';
import { ConfigError } from '../errors.js';
import { createOtlpPost } from '../net/otlp-post.js';
import { AuditLog } from '../observability/audit-log.js';
import { fileAuditSink, stderrAuditSink } from '../observability/audit-sink.js';
import type { Logger } from '../observability/logger.js';
import { OtlpSpanExporter } from '../observability/otlp-exporter.js';
import { Tracing } from '../observability/tracing.js';
import { compileDeniedTools } from '../policy/denied-tools.js';
import { compileHiddenReason } from '../policy/hidden-reason.js';
import { compilePolicyRules } from '../policy/policy-rules.js';
import type { ToolFilters } from './live-settings.js';
import type { RequestObservers } from '../inbound/request-observers.js';

/** Longest the shutdown waits for the last spans to be exported. */
const SHUTDOWN_EXPORT_MS = 3_000;

export interface TelemetrySettings {
  tracing: TracingSettings | undefined;
  audit: GatewayConfig['audit'];
}

/** Pure: throws `ConfigError` naming every problem of the `tracing` block and the `OTEL_*` variables. */
export function resolveTelemetry(config: Readonly<GatewayConfig>, env: Readonly<Record<string, string | undefined>>): TelemetrySettings {
  return { tracing: resolveTracing(config.tracing, env, compilePolicyRules(config.policy)), audit: config.audit };
}

export interface TelemetryDeps {
  config: Readonly<GatewayConfig>;
  logger: Logger;
  version: string;
  /** Every running server's config (the config's and the plugins'). */
  /** Each server's tool filters, read at each check (a reload swaps them: live-settings.ts). */
  toolFilters: ToolFilters;
  /** Servers declared but not run (a plugin configured `enabled: false`). */
  disabledServers: ReadonlySet<string>;
  /** Egress refusals of the exporter, for metrics. */
  onEgressRefusal?: (range: string) => void;
}

export interface Telemetry {
  readonly tracing: Tracing | undefined;
  readonly audit: AuditLog | undefined;
  /** What an endpoint's requests are observed with; `undefined` when tracing and audit are off. */
  observersFor(endpoint: string, separator: string | null, server?: string): RequestObservers | undefined;
  /** Writes the audit lines and exports the spans still waiting, then releases both. */
  close(): Promise<void>;
}

function openAudit(settings: NonNullable<GatewayConfig['audit']>, logger: Logger): AuditLog {
  if (settings.sink === 'stderr') return new AuditLog(stderrAuditSink());
  try {
    return new AuditLog(fileAuditSink({ path: settings.sink, maxBytes: settings.maxBytes, maxFiles: settings.maxFiles, logger }));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError([`audit.sink: the audit file could not be opened${typeof code === 'string' ? ` (${code})` : ''}`]);
  }
}

export function startTelemetry(settings: TelemetrySettings, deps: TelemetryDeps): Telemetry {
  const { logger } = deps;
  const audit = settings.audit === undefined ? undefined : openAudit(settings.audit, logger);
  let tracing: Tracing | undefined;
  let closeExporter = async (): Promise<void> => {};
  if (settings.tracing !== undefined) {
    const traces = settings.tracing;
    const otlp = createOtlpPost({
      endpoint: traces.endpoint,
      headers: traces.headers,
      allowPrivateNetwork: traces.allowPrivateNetwork,
      timeoutMs: traces.timeoutMs,
      logger,
      ...(deps.onEgressRefusal === undefined ? {} : { onRefusal: deps.onEgressRefusal }),
    });
    closeExporter = otlp.close;
    tracing = new Tracing({
      serviceName: traces.serviceName,
      serviceVersion: deps.version,
      sampleRatio: traces.sampleRatio,
      exportTimeoutMillis: traces.timeoutMs,
      exporter: new OtlpSpanExporter({ protocol: traces.protocol, post: otlp.post, logger }),
    });
    // Never the URL or a header: the protocol and the sampling are enough to tell it is on.
    logger.info({ protocol: traces.protocol, sampleRatio: traces.sampleRatio }, 'tracing on (OTLP/HTTP)');
  }
  const policyAllows = compileDeniedTools(deps.config.policy.deniedTools);
  let closing: Promise<void> | undefined;
  return {
    tracing,
    audit,
    observersFor(endpoint, separator, server) {
      if (tracing === undefined && audit === undefined) return undefined;
      const hiddenReason = compileHiddenReason({
        filters: deps.toolFilters,
        disabled: deps.disabledServers,
        policyAllows,
        separator,
        ...(server === undefined ? {} : { server }),
      });
      return { endpoint, hiddenReason, ...(tracing === undefined ? {} : { tracing }), ...(audit === undefined ? {} : { audit }) };
    },
    close() {
      closing ??= (async () => {
        audit?.close();
        // A collector that does not answer must not hold the shutdown: spans waiting past this are lost.
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, SHUTDOWN_EXPORT_MS);
          timer.unref();
        });
        await Promise.race([tracing?.shutdown().catch(() => undefined), bound]);
        clearTimeout(timer);
        await closeExporter();
      })();
      return closing;
    },
  };
}
