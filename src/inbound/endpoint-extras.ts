/**
 * What an endpoint adds to the SDK's handshake and to its catalogue beyond the upstreams': its
 * instructions (the persona labelled at the head, the gateway's text, each upstream's labelled),
 * the completion of each `initialize` / `server/discover` result for the asking client (its own
 * persona, bounded by the policy; the endpoint's `_meta`), and the gateway's own entries.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { GatewayError, toJsonRpcError } from '../errors.js';
import { mergeInstructions } from '../catalogue/merge.js';
import { gatewayText } from '../catalogue/persona.js';
import type { GatewayEntries } from '../routing/gateway-entries.js';
import { readInitOptions } from '../rpc/init-options.js';
import type { Handshake } from './method-table.js';
import { boundOptions, type OptionsBounds } from './init-options-reader.js';

export interface EndpointExtrasOptions {
  /** The gateway's own instructions, placed after the persona and before each upstream's. */
  instructions: string | undefined;
  /** Labelled at the head of the instructions (config `persona`); a client may ask for its own within `initOptions`. */
  persona?: string;
  /** What clients may set at `initialize` (rpc/init-options.ts) and its bounds; absent: nothing beyond `deferTools`. */
  initOptions?: OptionsBounds;
  /** The gateway's own prompts, resources and data tools (routing/gateway-entries.ts). */
  entries?: GatewayEntries;
  /**
   * The gateway's text leads the instructions even with one server (an agent endpoint: its body
   * first); otherwise a one-server endpoint (a side channel) answers that server's own instructions.
   */
  instructionsLead?: boolean;
  /** Added to every handshake result's `_meta` (`portcullis/server`, an agent's `model`). */
  handshakeMeta?: Readonly<Record<string, unknown>>;
  readonly scope: { readonly servers: { readonly names: readonly string[] } };
}

type Parts = ReadonlyArray<{ server: string; instructions?: string | undefined }>;

/** The instructions: the persona (the client's, else the config's) and the gateway's text, then each upstream's, labelled. */
export function endpointInstructions(options: EndpointExtrasOptions, parts: Parts, clientPersona?: string): string | undefined {
  const own = gatewayText(clientPersona ?? options.persona, options.instructions);
  return options.scope.servers.names.length === 1 && options.instructionsLead !== true && own === options.instructions
    ? parts[0]?.instructions ?? own
    : mergeInstructions(own, parts);
}

/** The handshake completion and the entries for every `Server` of an endpoint; `parts` are read at each handshake. */
export function endpointExtras(options: EndpointExtrasOptions, parts: () => Parts): { handshake?: Handshake; entries?: GatewayEntries } {
  const { entries, initOptions, handshakeMeta } = options;
  const withEntries = entries === undefined ? {} : { entries };
  if (initOptions === undefined && handshakeMeta === undefined) return withEntries;
  const handshake: Handshake = (meta) => {
    let instructions: string | undefined;
    if (initOptions !== undefined) {
      // Read again without logging: the session (or this request) already logged what it ignored.
      const read = readInitOptions(meta);
      const bounded = read.ok ? boundOptions(read.options, initOptions) : read;
      if (!bounded.ok) {
        const wire = toJsonRpcError(new GatewayError('INVALID_PARAMS', bounded.message));
        throw new ProtocolError(wire.code, wire.message, wire.data);
      }
      const persona = bounded.options.agentPersona;
      if (persona !== undefined) instructions = endpointInstructions(options, parts(), persona);
    }
    return { ...(instructions === undefined ? {} : { instructions }), ...(handshakeMeta === undefined ? {} : { meta: handshakeMeta }) };
  };
  return { handshake, ...withEntries };
}
