/**
 * The `deferTools` init option: a client asks for deferral on or off for its session in
 * `initialize` params `_meta["portcullis/options"]` (2025 era), or in each request's `_meta`
 * under the same key (2026 era, which has no session). Only `deferTools` is read here; an absent
 * key means "no preference". A check that returns a result union; the caller refuses with -32602.
 */

import { OPTIONS_META_KEY } from '../../rpc/request-meta.js';

export type DeferToolsOption = { ok: true; value: boolean | undefined } | { ok: false; message: string };

export function readDeferToolsOption(meta: unknown): DeferToolsOption {
  const options = record(meta)?.[OPTIONS_META_KEY];
  if (options === undefined) return { ok: true, value: undefined };
  const fields = record(options);
  if (fields === undefined) return { ok: false, message: `_meta["${OPTIONS_META_KEY}"] must be an object` };
  const value = fields.deferTools;
  if (value === undefined || typeof value === 'boolean') return { ok: true, value };
  return { ok: false, message: `_meta["${OPTIONS_META_KEY}"].deferTools must be true or false` };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
