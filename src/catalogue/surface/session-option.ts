/**
 * The `deferTools` init option (docs/reference.md, "Init options"): a client asks for deferral on or off in
 * `initialize` params `_meta["portcullis/options"]` (2025 era), or in each request's `_meta`
 * under the same key (2026 era, which has no session). The options are read by one closed schema
 * (rpc/init-options.ts); this is its `deferTools` answer. An absent key means "no preference";
 * the caller refuses a bad value with -32602.
 */
import { OPTIONS_META_KEY, readInitOptions } from '../../rpc/init-options.js';

export { OPTIONS_META_KEY };

export type DeferToolsOption = { ok: true; value: boolean | undefined } | { ok: false; message: string };

export function readDeferToolsOption(meta: unknown): DeferToolsOption {
  const read = readInitOptions(meta);
  return read.ok ? { ok: true, value: read.options.deferTools } : { ok: false, message: read.message };
}
