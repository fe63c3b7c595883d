/**
 * The customisation list as hosts read it: the wire shapes of the Agent Host Protocol's session
 * state (`McpServerCustomization`, `AgentCustomization`, plugins with children), camelCase, optional
 * fields omitted when absent. docs/customizations.md describes every field and rule.
 */
import type { Icon, TextRange } from '../plugins/types.js';

export type { Icon, TextRange };

interface CustomizationBase {
  /** Opaque, stable for the gateway's lifetime; every action targets it. */
  readonly id: string;
  /** file:// URI of the file that declared it (config, manifest, MCP file or agent file). */
  readonly uri: string;
  readonly name: string;
  readonly icons?: readonly Icon[];
  /** The declaration's span inside `uri`, when it is part of a larger file. */
  readonly range?: TextRange;
  readonly _meta?: Readonly<Record<string, unknown>>;
}

export type CustomizationEnablement =
  | { readonly kind: 'session'; readonly enabled: boolean }
  | { readonly kind: 'workspace'; readonly uri: string; readonly enabled: boolean }
  | { readonly kind: 'global'; readonly enabled: boolean };

/** RFC 9728 protected resource metadata, snake_case as the RFC spells it. */
export type ProtectedResourceMetadata = Readonly<Record<string, unknown>> & { readonly resource: string };

export type McpServerState =
  | { readonly kind: 'starting' }
  | { readonly kind: 'ready' }
  | {
      readonly kind: 'authRequired';
      readonly reason: 'required' | 'expired' | 'insufficientScope';
      readonly resource: ProtectedResourceMetadata;
      readonly requiredScopes?: readonly string[];
      readonly description?: string;
    }
  | { readonly kind: 'error'; readonly error: { readonly errorType: string; readonly message: string } }
  | { readonly kind: 'stopped' };

/** What the side channel of a server serving MCP Apps proxies for them (mcp-app.ts). */
export interface McpAppInfo {
  readonly capabilities: {
    readonly serverTools?: { readonly listChanged?: boolean };
    readonly serverResources?: { readonly listChanged?: boolean };
    readonly logging?: Readonly<Record<string, never>>;
    readonly sampling?: { readonly tools?: Readonly<Record<string, never>> };
  };
}

export interface McpServerCustomization extends CustomizationBase {
  readonly type: 'mcpServer';
  readonly enablement?: readonly CustomizationEnablement[];
  readonly state: McpServerState;
  /** URL of the server's side channel; present only while `state` is `ready`. */
  readonly channel?: string;
  /** Present for a server that serves MCP Apps, while `ready`. */
  readonly mcpApp?: McpAppInfo;
}

export interface AgentCustomization extends CustomizationBase {
  readonly type: 'agent';
  readonly enabled?: boolean;
  readonly description?: string;
  readonly model?: string;
  readonly tools?: readonly string[];
  readonly disableModelInvocation?: boolean;
  readonly disableUserInvocation?: boolean;
}

export type PluginLoadState =
  | { readonly kind: 'loading' }
  | { readonly kind: 'loaded' }
  | { readonly kind: 'degraded'; readonly message: string }
  | { readonly kind: 'error'; readonly message: string };

export interface PluginCustomization extends CustomizationBase {
  readonly type: 'plugin';
  /** Present on a plugin a client brought (its session's servers): an opaque id of that client. */
  readonly clientId?: string;
  readonly version?: string;
  readonly enablement?: readonly CustomizationEnablement[];
  readonly load?: PluginLoadState;
  /** Absent: not parsed yet; `[]`: parsed, empty. */
  readonly children?: ReadonlyArray<McpServerCustomization | AgentCustomization>;
}

/**
 * The top level of the list. An `agent` item at the top level is one of the gateway's own agents
 * directory (it belongs to no plugin); plugin agents are plugin children.
 */
export type Customization = PluginCustomization | McpServerCustomization | AgentCustomization;
