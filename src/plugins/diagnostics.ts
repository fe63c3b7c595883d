/**
 * Problems found while reading plugins and agents, and the load state they add up to.
 *
 * A diagnostic names where the problem is (plugin, file, server or agent, field) and what is
 * wrong, and never what the value was: commands, URLs, header and env values routinely hold
 * secrets or paths an operator would not publish (docs/plugins.md, "Diagnostics").
 */
import { quoteName } from './naming.js';
import type { PluginLoad } from './types.js';

export interface PluginDiagnostic {
  /** The plugin's name (its directory's name before the manifest is read); absent at gateway level. */
  readonly plugin?: string;
  /** file:// URI of the file the problem is in. */
  readonly file: string;
  readonly server?: string;
  readonly agent?: string;
  /** Dotted path of the offending field inside the entry or file (`env`, `frontmatter.tools`). */
  readonly field?: string;
  readonly message: string;
}

/** Where to cap a degraded plugin's summary; every diagnostic stays available in full. */
const MAX_SUMMARISED = 5;

/** One line naming plugin, server or agent, field and the problem; no value is ever part of it. */
export function describeDiagnostic(diagnostic: PluginDiagnostic): string {
  const where: string[] = [];
  if (diagnostic.plugin !== undefined) where.push(`plugin ${quoteName(diagnostic.plugin)}`);
  if (diagnostic.server !== undefined) where.push(`server ${quoteName(diagnostic.server)}`);
  if (diagnostic.agent !== undefined) where.push(`agent ${quoteName(diagnostic.agent)}`);
  if (diagnostic.field !== undefined) where.push(`field ${diagnostic.field}`);
  if (where.length === 0) where.push(diagnostic.file);
  return `${where.join(', ')}: ${diagnostic.message}`;
}

/** `degraded` when anything was skipped or ignored, else `loaded`. */
export function loadFromDiagnostics(diagnostics: readonly PluginDiagnostic[]): PluginLoad {
  if (diagnostics.length === 0) return { kind: 'loaded' };
  const shown = diagnostics.slice(0, MAX_SUMMARISED).map(describeDiagnostic);
  const more = diagnostics.length - shown.length;
  if (more > 0) shown.push(`and ${more} more`);
  return { kind: 'degraded', message: shown.join('; ') };
}
