/**
 * The audit log (docs/operations.md, "Audit log"): one JSON line per `tools/call`,
 * `prompts/get` and `resources/read`, and per refusal, with a fixed set of fields that is a
 * documented contract. Every field is present on every line (`null` when it does not apply), in
 * this order: `type` (always `"audit"`), `time`, `method`, `principal`, `session`, `endpoint`,
 * `server`, `tool`, `prompt`, `uri`, `decision`, `rule`, `durationMs`, `outcome`, `errorCode`, `reason`,
 * `status`, `id`.
 *
 * What a line never holds: arguments, results, header values, the session id itself (its keyed
 * tag only, `session-tag.ts`), or an error message (it can echo what the client sent). Strings
 * from the request (tool, prompt, uri, principal) are cut at 512 characters. Each line also goes
 * into a bounded in-memory ring (`audit-ring.ts`) that the admin page reads.
 */
import type { AuditDecision } from './audit-decision.js';
import { AuditRing, type AuditRingLimits } from './audit-ring.js';
import type { AuditSink } from './audit-sink.js';

export interface AuditRecord {
  /** When the request arrived (ms since the epoch). */
  started: number;
  /** The JSON-RPC method; absent for a refusal before the body was read. */
  method?: string;
  principal?: string;
  /** The session's keyed tag. */
  session?: string;
  /** `aggregate`, `server:<name>`, `agent:<name>`, or `gateway` (a route outside the MCP endpoints). */
  endpoint: string;
  server?: string;
  tool?: string;
  prompt?: string;
  uri?: string;
  decision: AuditDecision;
  /** The policy's `access` rule behind a `denied` decision (its name, `rules[i]`, or `default`). */
  rule?: string;
  durationMs: number;
  /** The JSON-RPC error code answered; absent: success. */
  errorCode?: number;
  /** The gateway's error code (docs/errors.md); absent for success and upstream errors. */
  reason?: string;
  /** The HTTP status of a refusal answered outside a JSON-RPC stream. */
  status?: number;
  id?: string | number | null;
}

const MAX_STRING = 512;

function bounded(value: string | undefined): string | null {
  if (value === undefined) return null;
  return value.length > MAX_STRING ? value.slice(0, MAX_STRING) : value;
}

/** The line of one record (exported for the contract test). */
export function auditLine(record: AuditRecord): string {
  return `${JSON.stringify({
    type: 'audit',
    time: new Date(record.started).toISOString(),
    method: record.method ?? null,
    principal: bounded(record.principal),
    session: record.session ?? null,
    endpoint: record.endpoint,
    server: record.server ?? null,
    tool: bounded(record.tool),
    prompt: bounded(record.prompt),
    uri: bounded(record.uri),
    decision: record.decision,
    rule: bounded(record.rule),
    durationMs: Math.round(record.durationMs * 1000) / 1000,
    outcome: record.errorCode === undefined ? 'ok' : 'error',
    errorCode: record.errorCode ?? null,
    reason: record.reason ?? null,
    status: record.status ?? null,
    id: record.id ?? null,
  })}\n`;
}

/** Methods audited whatever their outcome; any other request is audited only when refused. */
/**
 * One tool-integrity event as the audit log writes it (`"type": "integrity"` lines, docs/security.md,
 * "Tool integrity"): who, which server and tool, and hashes — never a description's text.
 */
export interface IntegrityAuditRecord {
  time: number;
  /** `pin`, `change`, `flood`, `approve` or `reject`. */
  event: string;
  /** Who decided (`first-use` for a pin on first listing; absent for changes the gateway saw). */
  principal?: string;
  server: string;
  /** Null: the server's instructions (or a whole-server event). */
  tool: string | null;
  hash?: string;
  before?: string | null;
  change?: string;
  flags?: readonly string[];
}

/** The line of one integrity record; every field present, `null` when it does not apply. */
export function integrityAuditLine(record: IntegrityAuditRecord): string {
  return `${JSON.stringify({
    type: 'integrity',
    time: new Date(record.time).toISOString(),
    event: record.event,
    principal: bounded(record.principal),
    server: record.server,
    tool: bounded(record.tool ?? undefined),
    hash: record.hash ?? null,
    before: record.before ?? null,
    change: record.change ?? null,
    flags: record.flags ?? [],
  })}\n`;
}

export const AUDITED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

export class AuditLog {
  /** The latest lines, for the admin page (audit-ring.ts). */
  readonly recent: AuditRing;

  constructor(
    private readonly sink: AuditSink,
    ring?: AuditRingLimits,
  ) {
    this.recent = new AuditRing(ring);
  }

  record(record: AuditRecord): void {
    const line = auditLine(record);
    this.sink.write(line);
    this.recent.push(line);
  }

  /** One tool-integrity line (`"type": "integrity"`). */
  integrity(record: IntegrityAuditRecord): void {
    // Not in the ring: the admin page reads request lines there, and shows pending changes itself.
    this.sink.write(integrityAuditLine(record));
  }

  /** Writes every waiting line (tests, shutdown). */
  flush(): void {
    this.sink.flushSync();
  }

  close(): void {
    this.sink.close();
  }
}
