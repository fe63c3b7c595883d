/**
 * What a 2025-era session's `initialize` settles before it is answered: the init options the
 * session honours (`_meta["portcullis/options"]`, docs/reference.md, "Init options") and the servers its
 * client brings (`_meta["portcullis/servers"]`). A bad option value refuses the `initialize`
 * (-32602 naming the option); deploy-only and unknown keys change nothing. Brought servers are
 * judged by the policy (-32602 naming the server and field) and opened before the `initialize` is
 * answered: a required one that cannot start refuses it (naming the server), and nothing of them
 * stays open. The session (`session-2025.ts`) applies what this settles.
 */
import { errorResponse, GatewayError } from '../errors.js';
import type { InitOptions } from '../rpc/init-options.js';
import type { OptionsReader } from './init-options-reader.js';
import { readDeferToolsOption } from '../catalogue/surface/session-option.js';
import { compileSessionServersGate } from '../config/session-servers.js';
import { compileDeniedTools } from '../policy/denied-tools.js';
import { policySchema } from '../policy/policy-schema.js';
import { SessionServersScope, type OpenSessionServersOptions } from '../routing/scopes/session-servers-scope.js';
import type { SessionServersOptions } from '../routing/scopes/scope-options.js';
import type { RequestId } from '../session/jsonrpc-id.js';

/** The default policy's judgement of servers a client brings: none accepted. */
export const DEFAULT_SESSION_SERVERS: SessionServersOptions = (() => {
  const policy = policySchema.parse({});
  return { gate: compileSessionServersGate(policy), policyAllows: compileDeniedTools(policy.deniedTools) };
})();

export interface InitializeContext {
  /** Reads and bounds the init options; absent: `deferTools` only. */
  readOptions: OptionsReader | undefined;
  /** The policy's judgement of brought servers, and their tool filter. */
  sessionServers: SessionServersOptions;
  /** The session has servers its client brought already: none are opened again. */
  hasBrought: boolean;
  /** What brought servers open with, beside the servers and their settings. */
  open(): Omit<OpenSessionServersOptions, 'servers' | 'settings'>;
}

/** What an accepted `initialize` settles; `options` only when the session reads init options. */
export interface SettledInitialize {
  readonly ok: true;
  readonly deferTools: boolean | undefined;
  readonly options?: InitOptions;
  /** The servers the client brought, opened. */
  readonly brought?: SessionServersScope;
}

/**
 * Settles the POSTed message `body` (request `id`) when it is an `initialize`: undefined when it
 * is not one, the refusal to answer it with, or what the session is to apply.
 */
export async function settleInitialize(
  body: unknown,
  id: RequestId,
  context: InitializeContext,
): Promise<SettledInitialize | { readonly ok: false; readonly response: Response } | undefined> {
  const message = body as { method?: unknown; params?: { _meta?: unknown } } | undefined;
  if (message?.method !== 'initialize') return undefined;
  const refuse = (error: GatewayError) => ({ ok: false as const, response: errorResponse(error, { id }) });
  const invalid = (text: string) => refuse(new GatewayError('INVALID_PARAMS', `initialize: ${text}`));
  let deferTools: boolean | undefined;
  let options: InitOptions | undefined;
  if (context.readOptions === undefined) {
    const option = readDeferToolsOption(message.params?._meta);
    if (!option.ok) return invalid(option.message);
    deferTools = option.value;
  } else {
    const read = context.readOptions(message.params?._meta);
    if (!read.ok) return invalid(read.message);
    options = read.options;
    deferTools = read.options.deferTools;
  }
  const supplied = context.sessionServers.gate(body);
  if (!supplied.ok) return refuse(supplied.error);
  if (supplied.servers === undefined || context.hasBrought) return { ok: true, deferTools, ...(options === undefined ? {} : { options }) };
  const opened = await SessionServersScope.open({ ...context.open(), servers: supplied.servers, settings: context.sessionServers });
  if (opened instanceof GatewayError) return refuse(opened);
  return { ok: true, deferTools, ...(options === undefined ? {} : { options }), brought: opened };
}
