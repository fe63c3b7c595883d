/**
 * The customisation list as a caller the policy's access rules narrow may see it: every server
 * item whose server its profile hides is left out (top-level, and among a plugin's children), a
 * plugin whose every child was such a server goes with them, and agents keep their place without
 * their `tools` (a tool name may belong to a server the caller cannot see). A server counts as
 * shown when the profile shows its non-tool parts (`serverParts`), as every other listing of
 * servers judges it (catalogue.ts `showsServer`): a server of which the rules let the caller use
 * single tools only is not named here. Pure.
 */
import { seesAll, showsServer, type AccessProfile } from '../policy/access-policy.js';
import type { ListSnapshot } from './customization-list.js';
import type { AgentCustomization, Customization, McpServerCustomization } from './types.js';

function agentFor(item: AgentCustomization): AgentCustomization {
  if (item.tools === undefined) return item;
  const { tools: _hidden, ...rest } = item;
  return rest;
}

function child(item: McpServerCustomization | AgentCustomization, access: AccessProfile): McpServerCustomization | AgentCustomization | undefined {
  if (item.type === 'agent') return agentFor(item);
  return showsServer(access, item.name) ? item : undefined;
}

export function customizationsFor(items: readonly Customization[], access: AccessProfile | undefined): readonly Customization[] {
  if (seesAll(access)) return items;
  const shown: Customization[] = [];
  for (const item of items) {
    if (item.type !== 'plugin') {
      const kept = child(item, access);
      if (kept !== undefined) shown.push(kept);
      continue;
    }
    if (item.children === undefined) {
      shown.push(item);
      continue;
    }
    const children = item.children.flatMap((c) => child(c, access) ?? []);
    // A plugin that had children and keeps none is wholly hidden (its name would say what it serves).
    if (item.children.length > 0 && children.length === 0) continue;
    shown.push({ ...item, children });
  }
  return shown;
}

/** The caller's list as JSON: the snapshot's own text when its profile hides nothing. */
export function listJsonFor(snapshot: ListSnapshot, access: AccessProfile | undefined): string {
  return seesAll(access) ? snapshot.json : JSON.stringify({ items: customizationsFor(snapshot.items, access) });
}

/**
 * True when `id` names an item the caller's list shows (top-level, or a child of a plugin it
 * shows). What the toggle and authenticate routes act on: an id the caller's access rules hide is
 * answered as one that does not exist, so acting on it tells nothing the list does not. Pure.
 */
export function showsId(items: readonly Customization[], access: AccessProfile | undefined, id: string): boolean {
  return customizationsFor(items, access).some((item) => item.id === id || (item.type === 'plugin' && item.children?.some((c) => c.id === id) === true));
}
