/**
 * The policy's `deniedTools`: globs that hide a tool from `tools/list` and refuse it on
 * `tools/call`, whatever the endpoint and whatever name the catalogue gave it.
 *
 * Why several names: the name a client sees is not a stable handle. The catalogue may shorten it
 * and append a hash (long names), rename it on a collision, sanitise odd characters to `_`, or
 * drop the server prefix (`separator: null`, and every per-server side channel). A glob written
 * as `files__delete_*` must still catch `delete_everything` of server `files` on its side channel,
 * and `*delete*` must catch a name that was shortened past the word. So each glob is tested on:
 * the exposed name, the canonical `server__tool`, that canonical name sanitised the way the
 * catalogue sanitises, and the upstream's bare tool name. A match on any of them denies.
 * (Denying more than the operator meant is the safe direction; a hostile upstream that names a
 * tool to match a glob only hides its own tool.)
 */
import { sanitizeName } from '../naming/names.js';
import { compileToolFilter } from './tool-filter.js';

/** `true` when the tool may be listed and called under the policy. */
export type PolicyToolCheck = (server: string, name: string, exposed: string) => boolean;

/** The separator of the canonical name policy globs are written against. */
export const CANONICAL_SEPARATOR = '__';

/** `server__tool`: the name a tool has with default namespacing and no shortening. */
export function canonicalToolName(server: string, name: string): string {
  return `${server}${CANONICAL_SEPARATOR}${name}`;
}

/**
 * Compiles `deniedTools` globs (see `compileGlob`: case-insensitive, `*` and `?`) into a check
 * for the visibility filter. Throws `TypeError` for an empty glob.
 */
export function compileDeniedTools(globs: readonly string[]): PolicyToolCheck {
  if (globs.length === 0) return () => true;
  const notDenied = compileToolFilter({ enabledTools: [], disabledTools: [], deniedGlobs: globs });
  return function policyToolCheck(server, name, exposed) {
    const canonical = canonicalToolName(server, name);
    return notDenied(exposed) && notDenied(canonical) && notDenied(sanitizeName(canonical)) && notDenied(name);
  };
}
