/**
 * Whether the gateway exports traces, and where: the `tracing` block first, then the standard
 * OpenTelemetry variables (OpenTelemetry specification, "Environment Variable Specification" and
 * "OTLP Exporter Configuration"). Pure: the environment is handed in (the CLI reads `process.env`).
 *
 * Read: `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn tracing off (unless the
 * block says `enabled: true`); `OTEL_TRACES_EXPORTER` other than `otlp`/`none` is refused (only
 * OTLP/HTTP is built); `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended); `OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL`
 * (`http/protobuf`, `http/json`; `grpc` is refused); `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS`
 * (`k=v,k2=v2`, values URL-encoded); `OTEL_SERVICE_NAME`.
 *
 * Every URL, from the block or a variable, goes through the one egress check
 * (`policy/egress-target.ts`, infrastructure tier): `https:`, or `http:` to loopback — and
 * loopback or private addresses are dialled only with `tracing.allowPrivateNetwork` where the
 * policy's `privateNetwork.allowInfrastructure` permits it. Problems name the field or variable,
 * never the URL or a header value.
 */
import { ConfigError } from '../errors.js';
import { egressTargetProblems } from '../policy/egress-target.js';
import type { PolicyRules } from '../policy/policy-rules.js';
import { tracesEgressTarget } from './egress-targets.js';
import type { TracingConfig } from './telemetry-schema.js';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingSettings {
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  readonly serviceName: string;
  readonly sampleRatio: number;
  readonly allowPrivateNetwork: boolean;
  /** Lower-case header names; values are secrets (never logged). */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_SAMPLE_RATIO = 1;
const DEFAULT_TIMEOUT_MS = 10_000;

function set(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function protocolOf(value: string | undefined, field: string, problems: string[]): OtlpProtocol {
  if (value === undefined || value === 'http/protobuf') return 'http/protobuf';
  if (value === 'http/json') return 'http/json';
  problems.push(`${field}: only "http/protobuf" and "http/json" are supported (OTLP over HTTP)`);
  return 'http/protobuf';
}

/** `k=v,k2=v2` with URL-encoded values (the OTLP exporter variables' format). */
function parseHeaderList(text: string, field: string, problems: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    const name = (at < 0 ? '' : part.slice(0, at)).trim().toLowerCase();
    let value: string;
    try {
      value = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      value = '';
    }
    // Never the value in a problem: it is usually an API key.
    if (!/^[a-z0-9-]{1,64}$/.test(name) || value === '' || /[^\t\x20-\x7e]/.test(value)) {
      problems.push(`${field}: an entry is not "name=value" with a header name and a printable value`);
      continue;
    }
    headers[name] = value;
  }
  return headers;
}

/**
 * The tracing settings in force, or `undefined` when tracing is off. Throws `ConfigError` listing
 * every problem (an unsupported exporter or protocol, a refused URL, a missing header variable).
 */
export function resolveTracing(block: TracingConfig | undefined, env: Env, rules: PolicyRules): TracingSettings | undefined {
  if (block?.enabled === false) return undefined;
  const problems: string[] = [];
  const exporter = set(env, 'OTEL_TRACES_EXPORTER');
  const envOff = set(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || exporter === 'none';
  if (envOff && block?.enabled !== true) return undefined;
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') {
    problems.push('OTEL_TRACES_EXPORTER: only "otlp" (over HTTP) or "none" is supported');
  }
  let endpoint: { url: string; field: string } | undefined;
  const tracesUrl = set(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const baseUrl = set(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (block?.endpoint !== undefined) endpoint = { url: block.endpoint, field: 'tracing.endpoint' };
  else if (tracesUrl !== undefined) endpoint = { url: tracesUrl, field: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' };
  else if (baseUrl !== undefined) endpoint = { url: `${baseUrl.replace(/\/+$/, '')}/v1/traces`, field: 'OTEL_EXPORTER_OTLP_ENDPOINT' };
  if (endpoint === undefined) {
    if (block?.enabled === true) problems.push('tracing.endpoint: tracing is enabled but no endpoint is set (here or in OTEL_EXPORTER_OTLP_ENDPOINT)');
    if (problems.length > 0) throw new ConfigError(problems);
    return undefined;
  }
  // The block's own URL was checked with the rest of the config; one from a variable is checked here.
  if (endpoint.field !== 'tracing.endpoint') problems.push(...egressTargetProblems(tracesEgressTarget(block, endpoint.url, endpoint.field), rules));
  const protocol =
    block?.protocol ??
    protocolOf(set(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? set(env, 'OTEL_EXPORTER_OTLP_PROTOCOL'), 'OTEL_EXPORTER_OTLP_PROTOCOL', problems);
  const headers: Record<string, string> = {};
  for (const field of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    const text = set(env, field);
    if (text !== undefined) Object.assign(headers, parseHeaderList(text, field, problems));
  }
  for (const [header, variable] of Object.entries(block?.envHeaders ?? {})) {
    const value = set(env, variable);
    if (!rules.envHeaderAllowed(variable)) problems.push(`tracing.envHeaders.${header}: the policy does not let the gateway read ${variable}`);
    else if (value === undefined) problems.push(`tracing.envHeaders.${header}: environment variable ${variable} is not set`);
    else if (/[^\t\x20-\x7e]/.test(value)) problems.push(`tracing.envHeaders.${header}: environment variable ${variable} holds a character a header cannot carry`);
    else headers[header.toLowerCase()] = value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({
    endpoint: endpoint.url,
    protocol,
    serviceName: block?.serviceName ?? set(env, 'OTEL_SERVICE_NAME') ?? 'portcullis',
    sampleRatio: block?.sampleRatio ?? DEFAULT_SAMPLE_RATIO,
    allowPrivateNetwork: block?.allowPrivateNetwork ?? false,
    headers: Object.freeze(headers),
    timeoutMs: block?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}
