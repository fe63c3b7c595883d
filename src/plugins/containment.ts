/**
 * Package-path containment (Agent Plugins 1.0 §4.1): a file or directory a plugin points at must
 * resolve, symlinks included, inside the plugin's resolved root. Without it a manifest could name
 * `../../.ssh/id_rsa` as a command or a working directory, or ship a symlink that leads out of the
 * package, and the gateway would execute or expose whatever it points at.
 *
 * Both sides are compared after `realpath`; a path that does not exist yet (a working directory
 * under PLUGIN_DATA the server creates itself) is judged by its deepest existing ancestor, since
 * only that part can hold a symlink today.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';

export type Contained =
  | { readonly ok: true; readonly path: string; readonly exists: boolean }
  | { readonly ok: false; readonly reason: 'escapes' | 'unresolvable' };

/** True when `candidate` is `base` or below it; both absolute and normalised. */
export function isWithin(base: string, candidate: string): boolean {
  if (candidate === base) return true;
  const prefix = base.endsWith(path.sep) ? base : base + path.sep;
  return candidate.startsWith(prefix);
}

/**
 * Resolves `candidate` (absolute) and checks it stays within `base` (already a realpath), first
 * lexically, then with every existing symlink resolved.
 */
export async function resolveWithin(base: string, candidate: string): Promise<Contained> {
  const lexical = path.resolve(candidate);
  if (!isWithin(base, lexical)) return { ok: false, reason: 'escapes' };
  const missing: string[] = [];
  let existing = lexical;
  for (;;) {
    try {
      const real = await realpath(existing);
      const resolved = missing.length === 0 ? real : path.join(real, ...missing.reverse());
      if (!isWithin(base, resolved)) return { ok: false, reason: 'escapes' };
      return { ok: true, path: resolved, exists: missing.length === 0 };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' || existing === base) return { ok: false, reason: 'unresolvable' };
      missing.push(path.basename(existing));
      existing = path.dirname(existing);
    }
  }
}
