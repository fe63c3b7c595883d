/**
 * Init options: what a client may negotiate over the wire, in `initialize` params
 * `_meta["portcullis/options"]` (2025 era, once per session) or in each request's `_meta` under
 * the same key (2026 era, which has no session). docs/reference.md, "Init options".
 *
 * The schema is closed: `dataMode`, `agentPersona`, `eventStoreLimit`, `deferTools`. A bad value
 * of one of them refuses the request (-32602 naming the key). Anything else is ignored, never
 * honoured: a deploy-time setting (listener `host`/`port`, `allowedHosts`, `allowedOrigins`,
 * `acknowledgedNoAuth`, any policy key) is reported as such, other keys as unknown, by name only
 * so the caller can log them once without echoing a value.
 *
 * Pure: the caller bounds `agentPersona` and `eventStoreLimit` by the policy and the config.
 */
import { z } from 'zod';
import { policySchema } from '../policy/policy-schema.js';

import { OPTIONS_META_KEY } from './request-meta.js';

export { OPTIONS_META_KEY };

/** Longest persona text a client may send at all; the policy's `agentPersona.maxChars` is lower or equal. */
export const MAX_PERSONA_CHARS = 16_384;

export const initOptionsSchema = z.strictObject({
  /** `resources`: resources as resources; `tools`: also `<server>__list_resources` / `<server>__read_resource` tools. */
  dataMode: z.enum(['resources', 'tools']).optional(),
  /** The client's own persona, in place of the configured one at the head of the instructions. */
  agentPersona: z.string().min(1).max(MAX_PERSONA_CHARS).optional(),
  /** This session's event history limit (2025 era); lowered to the config's when higher. */
  eventStoreLimit: z.number().int().positive().optional(),
  /** Deferral on or off for this client (docs/reference.md, "Deferral"). */
  deferTools: z.boolean().optional(),
});

export type InitOptions = z.infer<typeof initOptionsSchema>;

const OPTION_KEYS: ReadonlySet<string> = new Set(Object.keys(initOptionsSchema.shape));

/**
 * Settings only a deployment may choose: the listener's address and every policy key. Arriving
 * on the wire they change nothing; naming them apart from unknown keys tells an operator that a
 * client tried, not that it mistyped.
 */
export const DEPLOY_ONLY_KEYS: readonly string[] = Object.freeze(
  [...new Set(['host', 'port', 'allowedHosts', 'allowedOrigins', 'acknowledgedNoAuth', ...Object.keys(policySchema.shape)])].sort(),
);
const DEPLOY_ONLY: ReadonlySet<string> = new Set(DEPLOY_ONLY_KEYS);

/** Most ignored key names kept for the log line (a client may send thousands). */
const MAX_IGNORED_NAMES = 16;
/** Longest ignored key name quoted in a log line. */
const MAX_NAME_CHARS = 64;

export type InitOptionsRead =
  | {
      readonly ok: true;
      readonly options: InitOptions;
      /** Deploy-only keys present (ignored). */
      readonly deployOnly: readonly string[];
      /** Other keys that are not options (ignored), cut to a few short names. */
      readonly unknown: readonly string[];
    }
  | { readonly ok: false; readonly key: string; readonly message: string };

const NONE: InitOptionsRead = Object.freeze({ ok: true, options: Object.freeze({}), deployOnly: [], unknown: [] });

/** Reads the options from a request's `_meta` (absent key: no options). */
export function readInitOptions(meta: unknown): InitOptionsRead {
  const raw = record(meta)?.[OPTIONS_META_KEY];
  if (raw === undefined) return NONE;
  const fields = record(raw);
  if (fields === undefined) return { ok: false, key: OPTIONS_META_KEY, message: `_meta["${OPTIONS_META_KEY}"] must be an object` };
  const known: Record<string, unknown> = {};
  const deployOnly: string[] = [];
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (OPTION_KEYS.has(key)) known[key] = value;
    else if (DEPLOY_ONLY.has(key)) deployOnly.push(key);
    else if (unknown.length < MAX_IGNORED_NAMES) unknown.push(key.length > MAX_NAME_CHARS ? `${key.slice(0, MAX_NAME_CHARS)}…` : key);
  }
  const parsed = initOptionsSchema.safeParse(known);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = String(issue?.path[0] ?? OPTIONS_META_KEY);
    return { ok: false, key, message: `_meta["${OPTIONS_META_KEY}"].${key} ${describe(key)}` };
  }
  return { ok: true, options: parsed.data, deployOnly, unknown };
}

function describe(key: string): string {
  switch (key) {
    case 'dataMode':
      return 'must be "resources" or "tools"';
    case 'agentPersona':
      return `must be a non-empty string of at most ${MAX_PERSONA_CHARS} characters`;
    case 'eventStoreLimit':
      return 'must be a positive integer';
    case 'deferTools':
      return 'must be true or false';
    default:
      return 'is not valid';
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
