/**
 * The gateway's Prometheus metrics (docs/operations.md, "Metrics"): one registry per running
 * gateway, so several gateways in one process never share or double-count a series. Names and
 * labels follow the OpenTelemetry MCP semantic conventions where they define one
 * (`mcp.server.operation.duration`, `mcp.method.name`, `gen_ai.tool.name`), translated the way
 * Prometheus does (dots to underscores, unit suffix).
 *
 * Every label value is bounded: a method outside the MCP method set is `unknown`, a tool name is
 * recorded only when the catalogue lists it (else `unknown`), servers are the gateway's own (a
 * server a client brought into its session, named by that client, is `unknown` with its tools),
 * and reasons are the gateway's own codes. A client can make no series appear at will.
 *
 * The same samples feed each server's recent activity for the admin page (server-activity.ts).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ServerActivity } from './server-activity.js';

/** The label value for anything not in a known, bounded set. */
export const UNKNOWN_LABEL = 'unknown';

/** MCP request methods (both eras, plus the tasks extension) that may label a series. */
const MCP_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'server/discover',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'subscriptions/listen',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
]);

/** A method as a label value: itself when it is an MCP method, else `unknown`. */
export function methodLabel(method: string): string {
  return MCP_METHODS.has(method) ? method : UNKNOWN_LABEL;
}

/** Seconds; from a fast `tools/list` on a warm catalogue to a long tool call. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export type Outcome = 'ok' | 'error';

export interface RequestSample {
  method: string;
  /** The upstream that served the request; empty when none did alone (a merged list, an unknown name). */
  server: string;
  /** A catalogue tool name, or `unknown`; empty for methods other than `tools/call`. */
  tool: string;
  outcome: Outcome;
  seconds: number;
}

/** What the gauges read at scrape time (each a snapshot of state the gateway already keeps). */
export interface MetricSources {
  /** 2025-era sessions held by this replica (the 2026 era is sessionless). */
  sessions2025(): number;
  /** 2026-era `subscriptions/listen` streams and calls open on this replica (every endpoint); absent: 0. */
  open2026?(): { listens: number; calls: number };
  /** One row per configured upstream with its current state. */
  upstreams(): readonly { server: string; state: string }[];
  /** Live stdio child processes, by server. */
  stdioChildren(): ReadonlyMap<string, number>;
  /** Tokens sessions gave for `perUser` servers, held now (a count; never a value). */
  userCredentials?(): number;
  /** Events and bytes the event store's history budget currently holds; absent: no budget kept. */
  eventHistory?(): { events: number; bytes: number };
  /** True for the gateway's own servers (config, plugins, reloads): the only server label values. */
  isServer(name: string): boolean;
  /** Tool definitions pending an admin's decision, by server (tool integrity); absent: integrity off. */
  integrityPending?(): ReadonlyMap<string, number>;
}

/** Every state an upstream slot can be in, so a state's series reads 0 rather than vanishing. */
/** Every state `UpstreamRegistry.status()` reports (registry-entry.ts `effectiveState`). */
const UPSTREAM_STATES = ['idle', 'connecting', 'ready', 'authRequired', 'error', 'closed'] as const;

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requestDuration: Histogram<'mcp_method_name' | 'server' | 'gen_ai_tool_name' | 'outcome'>;
  private readonly authFailures: Counter<'reason'>;
  private readonly egressRefusals: Counter<'server' | 'reason'>;
  private readonly upstreamRestarts: Counter<'server'>;
  private readonly leaseWaits: Counter<'server'>;
  private readonly integrityEvents: Counter<'kind'>;
  private sources: MetricSources | undefined;
  /** Each server's requests over the last minutes, from the samples below (the admin page reads it). */
  readonly activity = new ServerActivity({ isServer: (server) => this.sources?.isServer(server) === true });

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // prom-client names these sums of its per-type gauges `_total`, which Prometheus reserves for
    // counters (`promtool check metrics` refuses them); the per-type gauges stay.
    for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
    this.requestDuration = new Histogram({
      name: 'mcp_server_operation_duration_seconds',
      help: 'Duration of MCP requests the gateway answered (count: requests), by method, upstream server, tool and outcome.',
      labelNames: ['mcp_method_name', 'server', 'gen_ai_tool_name', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.authFailures = new Counter({
      name: 'portcullis_auth_failures_total',
      help: 'Requests refused by inbound authentication, by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.egressRefusals = new Counter({
      name: 'portcullis_egress_refusals_total',
      help: 'Upstream connections the egress guard refused, by server and refused address class.',
      labelNames: ['server', 'reason'],
      registers,
    });
    this.upstreamRestarts = new Counter({
      name: 'portcullis_upstream_restarts_total',
      help: 'Times an upstream connection was re-established after it was lost, by server.',
      labelNames: ['server'],
      registers,
    });
    this.leaseWaits = new Counter({
      name: 'portcullis_lease_pool_waits_total',
      help: 'Calls that waited for a free stateless-pool connection, by server.',
      labelNames: ['server'],
      registers,
    });
    this.integrityEvents = new Counter({
      name: 'portcullis_tool_integrity_events_total',
      help: 'Tool-integrity events: pins on first use, changes recorded as pending, floods, approvals and rejections, by kind.',
      labelNames: ['kind'],
      registers,
    });
    const read = () => this.sources;
    new Gauge({
      name: 'portcullis_tool_integrity_pending',
      help: 'Tool definitions (and instructions) waiting for an admin to approve or reject them, by server.',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const [server, count] of read()?.integrityPending?.() ?? []) this.set({ server }, count);
      },
    });
    new Gauge({
      name: 'portcullis_sessions',
      help: 'Open MCP sessions by protocol era (2026-era requests are sessionless, so always 0).',
      labelNames: ['era'],
      registers,
      collect() {
        const sources = read();
        this.set({ era: '2025' }, sources?.sessions2025() ?? 0);
        this.set({ era: '2026' }, 0);
      },
    });
    new Gauge({
      name: 'portcullis_listen_streams',
      help: '2026-era subscriptions/listen streams open on this replica, every endpoint (each endpoint holds at most 1024).',
      registers,
      collect() {
        this.set(read()?.open2026?.().listens ?? 0);
      },
    });
    new Gauge({
      name: 'portcullis_calls_in_flight',
      help: '2026-era requests this replica is answering now (a listen stream is not one); a 2025 session counts its own.',
      registers,
      collect() {
        this.set(read()?.open2026?.().calls ?? 0);
      },
    });
    new Gauge({
      name: 'portcullis_upstream_state',
      help: 'Current state of each upstream server: 1 for the state it is in, 0 for the others.',
      labelNames: ['server', 'state'],
      registers,
      collect() {
        this.reset();
        for (const { server, state } of read()?.upstreams() ?? []) {
          for (const candidate of UPSTREAM_STATES) this.set({ server, state: candidate }, candidate === state ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'portcullis_stdio_children',
      help: 'Live stdio child processes, by server.',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const [server, count] of read()?.stdioChildren() ?? []) this.set({ server }, count);
      },
    });
    new Gauge({
      name: 'portcullis_upstream_user_credentials',
      help: 'Tokens 2025 sessions gave the gateway for perUser upstream servers, held now (one per session and server at most).',
      registers,
      collect() {
        this.set(read()?.userCredentials?.() ?? 0);
      },
    });
    new Gauge({
      name: 'portcullis_event_store_events',
      help: 'Stream events the event store currently keeps for resumption.',
      registers,
      collect() {
        this.set(read()?.eventHistory?.().events ?? 0);
      },
    });
    new Gauge({
      name: 'portcullis_event_store_bytes',
      help: 'Bytes of stream events the event store currently keeps for resumption.',
      registers,
      collect() {
        this.set(read()?.eventHistory?.().bytes ?? 0);
      },
    });
  }

  /** Connects the gauges to the gateway's state once it exists (they read 0 before). */
  attach(sources: MetricSources): void {
    this.sources = sources;
  }

  observeRequest(sample: RequestSample): void {
    const own = sample.server === '' || this.sources?.isServer(sample.server) === true;
    const server = own ? sample.server : UNKNOWN_LABEL;
    const tool = own || sample.tool === '' ? sample.tool : UNKNOWN_LABEL;
    this.requestDuration.observe({ mcp_method_name: methodLabel(sample.method), server, gen_ai_tool_name: tool, outcome: sample.outcome }, sample.seconds);
    if (own && server !== '') this.activity.record(server, sample.outcome === 'error', sample.seconds);
  }

  authFailed(reason: string): void {
    this.authFailures.inc({ reason });
  }

  egressRefused(server: string, reason: string): void {
    this.egressRefusals.inc({ server, reason });
  }

  upstreamRestarted(server: string): void {
    this.upstreamRestarts.inc({ server });
  }

  leaseWaited(server: string): void {
    this.leaseWaits.inc({ server });
  }

  /** One tool-integrity event (`pin`, `change`, `flood`, `approve`, `reject`). */
  integrityEvent(kind: string): void {
    this.integrityEvents.inc({ kind });
  }

  /** The exposition, in the Prometheus text format. */
  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
