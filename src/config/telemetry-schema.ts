/**
 * The `tracing` and `audit` blocks of the gateway config (docs/operations.md, "Traces" and
 * "Audit log"). Both are off unless configured: tracing also turns on from the standard
 * `OTEL_*` variables (`config/tracing-settings.ts` reads them), the audit log only from here.
 */
import { z } from 'zod';

/** Header name → environment variable name, read once at start (a secret never sits in the file). */
const envHeaders = z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name'), z.string().min(1)).default({});

export const tracingConfigSchema = z.strictObject({
  /** `false` keeps tracing off whatever the environment says; absent: on when an endpoint is known. */
  enabled: z.boolean().optional(),
  /**
   * The OTLP/HTTP traces URL, used as it is (e.g. `https://collector.example:4318/v1/traces`).
   * Absent: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`.
   */
  endpoint: z.string().min(1).optional(),
  /** OTLP/HTTP encoding; absent: `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`, else `http/protobuf`. */
  protocol: z.enum(['http/protobuf', 'http/json']).optional(),
  /** `service.name` of the spans; absent: `OTEL_SERVICE_NAME`, else `portcullis`. */
  serviceName: z.string().min(1).max(256).optional(),
  /** Share of new traces (no sampled parent) that are recorded; a parent's decision is followed. */
  sampleRatio: z.number().min(0).max(1).default(1),
  /**
   * Let the exporter reach a collector on loopback or the private network (and over plain
   * `http:` beyond loopback, never to a public address); only where the policy allows the
   * gateway's own services there (`privateNetwork.allowInfrastructure`).
   */
  allowPrivateNetwork: z.boolean().default(false),
  /** Exporter request headers from environment variables (a collector's API key). */
  envHeaders,
  /** Bounds one export request (connect and answer). */
  timeoutMs: z.number().int().min(100).max(60_000).default(10_000),
});

export const auditConfigSchema = z.strictObject({
  /**
   * Where audit lines go: a file path (relative to the config file), rotated by size, or
   * `"stderr"` (beside the log lines, told apart by `"type":"audit"`).
   */
  sink: z.string().min(1).default('stderr'),
  /** A file is rotated once it would grow past this many bytes. */
  maxBytes: z.number().int().min(4_096).max(1 << 30).default(10 * 1024 * 1024),
  /** Rotated files kept (`<file>.1` newest … `<file>.N`); older ones are deleted. */
  maxFiles: z.number().int().min(1).max(100).default(5),
});

export type TracingConfig = z.infer<typeof tracingConfigSchema>;
export type AuditConfig = z.infer<typeof auditConfigSchema>;
