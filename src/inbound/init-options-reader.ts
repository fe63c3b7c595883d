/**
 * Init options as an endpoint honours them (docs/reference.md, "Init options"): read by the closed schema
 * (rpc/init-options.ts), then bounded by what the deployment allows — `agentPersona` only where
 * the policy's `agentPersona.allowed` says so and within its `maxChars`, `eventStoreLimit`
 * lowered to the config's `eventStore.limit` — and the keys that were ignored logged, by name
 * only (never a value): deploy-only settings at warn, unknown keys at warn, once per session
 * (2025 era) or once per distinct set of names per endpoint (2026 era, bounded).
 */
import type { Logger } from '../observability/logger.js';
import { readInitOptions, type InitOptions } from '../rpc/init-options.js';

export type BoundedOptions = { readonly ok: true; readonly options: InitOptions } | { readonly ok: false; readonly message: string };

/** Reads one request's (or one session's) options from its `_meta`. */
export type OptionsReader = (meta: unknown) => BoundedOptions;

export interface OptionsBounds {
  /** The policy's `agentPersona`. */
  readonly persona: { readonly allowed: boolean; readonly maxChars: number };
  /** The config's `eventStore.limit` (already within the policy). */
  readonly eventStoreLimit: number;
}

/** Pure: the options within the bounds, or the refusal naming the key. */
export function boundOptions(options: InitOptions, bounds: OptionsBounds): BoundedOptions {
  const persona = options.agentPersona;
  if (persona !== undefined) {
    if (!bounds.persona.allowed) return { ok: false, message: `_meta["portcullis/options"].agentPersona is not allowed by this gateway's policy` };
    if ([...persona].length > bounds.persona.maxChars) {
      return { ok: false, message: `_meta["portcullis/options"].agentPersona must be at most ${bounds.persona.maxChars} characters` };
    }
  }
  const limit = options.eventStoreLimit;
  if (limit !== undefined && limit > bounds.eventStoreLimit) return { ok: true, options: { ...options, eventStoreLimit: bounds.eventStoreLimit } };
  return { ok: true, options };
}

/** Distinct ignored-name sets remembered per endpoint for 2026 requests (then no more lines). */
const MAX_REMEMBERED = 256;

/**
 * A reader for one endpoint. `perSession: true` logs every time it is called (a session reads
 * its options once); otherwise a set of ignored names is logged the first time it is seen.
 */
export function optionsReader(bounds: OptionsBounds, logger: Logger, perSession: boolean): OptionsReader {
  const seen = new Set<string>();
  const logIgnored = (deployOnly: readonly string[], unknown: readonly string[]) => {
    if (deployOnly.length === 0 && unknown.length === 0) return;
    if (!perSession) {
      const key = `${deployOnly.join(',')}|${unknown.join(',')}`;
      if (seen.has(key) || seen.size >= MAX_REMEMBERED) return;
      seen.add(key);
    }
    if (deployOnly.length > 0) logger.warn({ ignored: deployOnly }, 'init options: deploy-only settings sent by a client were ignored');
    if (unknown.length > 0) logger.warn({ ignored: unknown }, 'init options: unknown keys were ignored');
  };
  return (meta) => {
    const read = readInitOptions(meta);
    if (!read.ok) return { ok: false, message: read.message };
    logIgnored(read.deployOnly, read.unknown);
    return boundOptions(read.options, bounds);
  };
}
