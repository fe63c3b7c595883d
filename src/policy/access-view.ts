/**
 * One caller's access view: what the policy's access rules (access-policy.ts) let one caller see,
 * asked by every surface that names servers, tools or what servers say about themselves — the
 * handshake (`initialize`, `server/discover`: instructions, capabilities), whether a side
 * channel exists for the caller, the lists (routing/access-view.ts narrows the catalogue with the
 * same two predicates), /readyz and the customisation list.
 *
 * A server is shown when its non-tool parts are (`serverParts`): one of which the rules let the
 * caller use single tools only is not named — not in a list of servers, not in instructions, not
 * as a side channel — though those tools stay listed and callable where the caller meets them.
 */
import { seesAll, type AccessProfile } from './access-policy.js';

export interface AccessView {
  /** The profile this view reads; undefined when the policy hides nothing from anyone. */
  readonly access: AccessProfile | undefined;
  /** True when nothing is hidden from this caller: every predicate below answers true. */
  readonly seesAll: boolean;
  /** Whether the caller may see `server` as a server (its name, instructions, prompts, resources). */
  showsServer(server: string): boolean;
  /** Whether the caller may see and call the tool `name` of `server`, exposed as `exposed`. */
  showsTool(server: string, name: string, exposed: string): boolean;
  /** The items of servers shown to the caller, in their order (`items` itself when nothing is hidden). */
  shownServers<T extends { readonly server: string }>(items: readonly T[]): readonly T[];
}

const EVERYTHING: AccessView = Object.freeze({
  access: undefined,
  seesAll: true,
  showsServer: () => true,
  showsTool: () => true,
  shownServers: <T>(items: readonly T[]) => items,
});

export function accessView(access: AccessProfile | undefined): AccessView {
  if (seesAll(access)) return access === undefined ? EVERYTHING : { ...EVERYTHING, access };
  const showsServer = (server: string) => access.serverParts(server).allowed;
  return {
    access,
    seesAll: false,
    showsServer,
    showsTool: (server, name, exposed) => access.tool(server, name, exposed).allowed,
    shownServers: (items) => items.filter((item) => showsServer(item.server)),
  };
}
