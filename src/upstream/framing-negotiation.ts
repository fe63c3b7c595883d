/**
 * How a stdio connection settles on a framing: the `auto` negotiation as a state machine with no
 * I/O and no timers, so each step can be table-tested. The transport feeds it what happens
 * (a send, a detection, a message, the end of a chunk, the detection window running out) and
 * carries out what it answers (write these bytes, hold this message, drop that answer).
 *
 * `auto` (the default in config): a child cannot be asked which framing it speaks, and the client
 * must speak first (`initialize`). So:
 * 1. Output from the child decides: its first non-whitespace bytes are a `Content-…:` header
 *    (contentLength) or anything else (ndjson; a banner line is skipped). The decision holds for
 *    the connection's life, in both directions.
 * 2. The first outbound message (the probe) goes out as ndjson (what the MCP stdio binding
 *    specifies and nearly every server speaks). Later messages wait until the framing is known.
 * 3. If the child answers in Content-Length framing without having answered the probe, the probe
 *    is re-sent once, Content-Length-framed.
 * 4. If the child writes nothing for the detection window after the probe (a Content-Length
 *    server silently discarding ndjson), the probe is re-sent once, Content-Length-framed, in a
 *    shape an ndjson child skips as unparseable lines (see `encodeContentLengthProbe`), so a
 *    merely slow ndjson server does not see it twice. Whichever framing the child then answers in
 *    wins; a second answer to the probe (a child that understood both) is dropped.
 * A Content-Length server that errors out on the leading ndjson line needs `framing:
 * 'contentLength'`; one that parses stdin as a stream of JSON values rather than lines needs
 * `framing: 'ndjson'`. With a fixed framing the negotiation is settled from the start.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import {
  createAutoDecoder,
  createContentLengthDecoder,
  createNdjsonDecoder,
  encodeContentLengthProbe,
  encodeMessage,
  type DecoderOptions,
  type Framing,
  type FramingMode,
  type MessageDecoder,
} from './framing.js';

/** `auto`: messages sent after the probe while the framing is unknown wait, at most this many. */
export const DEFAULT_MAX_HELD_MESSAGES = 256;

export interface FramingNegotiationOptions {
  /** Most messages that may wait for the framing; default 256. Bounds what a silent child costs. */
  maxHeld?: number;
}

/** A message sent while the framing is unknown, with the settlement of its `send()`. */
export interface HeldMessage {
  readonly message: JSONRPCMessage;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** What to do with an outbound message. */
export type SendDecision =
  /** Write these bytes (the framing is known). */
  | { readonly kind: 'write'; readonly bytes: Buffer }
  /** Write these bytes (the probe, ndjson) and start the detection window. */
  | { readonly kind: 'probe'; readonly bytes: Buffer }
  /** The framing is unknown: pass the message to `hold` and settle its send on a later flush. */
  | { readonly kind: 'hold' }
  /** The framing is unknown and `maxHeld` messages already wait: refuse the message. */
  | { readonly kind: 'full' };

/** A held message released once the framing is known: its bytes, or why it cannot be encoded. */
export type Released =
  | { readonly held: HeldMessage; readonly bytes: Buffer }
  | { readonly held: HeldMessage; readonly error: Error };

/** What to write once a chunk of the child's output has been handled, in this order. */
export interface ChunkOutcome {
  /** The probe, Content-Length-framed, when the child answered in Content-Length without answering it. */
  readonly resend: Buffer | undefined;
  /** The held messages, in the order they were sent, once the framing is known. */
  readonly release: Released[];
}

export interface FramingNegotiation {
  /** The framing in use in both directions; `undefined` while `auto` has not decided. */
  readonly framing: Framing | undefined;
  /** Decides how an outbound message goes out; encodes it (throws if JSON cannot represent it). */
  send(message: JSONRPCMessage): SendDecision;
  /** Queues a message after `send` answered `hold`. */
  hold(held: HeldMessage): void;
  /** The decoder saw the framing of the child's output (a `detected` event). */
  detected(framing: Framing): void;
  /** Whether an inbound message goes to the client, or is a second answer to the probe to drop. */
  receive(message: JSONRPCMessage): 'deliver' | 'drop';
  /** Call after every event of a chunk was handled: what must be written now. */
  endOfChunk(): ChunkOutcome;
  /** The detection window ran out: the probe to re-send Content-Length-framed, if still due. */
  windowElapsed(): Buffer | undefined;
  /** The connection is gone: every held message, for its send to be rejected. */
  abandon(): HeldMessage[];
}

interface Probe {
  readonly message: JSONRPCMessage;
  readonly id: string | number | undefined;
  resent: boolean;
  answered: boolean;
}

/** The decoder for the child's output: `auto` emits a `detected` event before anything else. */
export function createInboundDecoder(mode: FramingMode, options: DecoderOptions): MessageDecoder {
  if (mode === 'ndjson') return createNdjsonDecoder(options);
  if (mode === 'contentLength') return createContentLengthDecoder(options);
  return createAutoDecoder(options);
}

/** A negotiation for one connection; `mode` other than `auto` is settled from the start. */
export function createFramingNegotiation(
  mode: FramingMode,
  options: FramingNegotiationOptions = {},
): FramingNegotiation {
  const maxHeld = options.maxHeld ?? DEFAULT_MAX_HELD_MESSAGES;
  if (!Number.isSafeInteger(maxHeld) || maxHeld <= 0) throw new TypeError('maxHeld must be a positive integer');
  let framing: Framing | undefined = mode === 'auto' ? undefined : mode;
  let probe: Probe | undefined;
  let resendAfterChunk = false;
  const held: HeldMessage[] = [];

  const resendProbe = (): Buffer | undefined => {
    if (probe === undefined || probe.resent) return undefined;
    probe.resent = true;
    return encodeContentLengthProbe(probe.message);
  };

  const release = (known: Framing): Released[] =>
    held.splice(0).map((entry): Released => {
      try {
        return { held: entry, bytes: encodeMessage(entry.message, known) };
      } catch (error) {
        return {
          held: entry,
          error: error instanceof Error ? error : new TypeError('message is not representable as JSON'),
        };
      }
    });

  return {
    get framing() {
      return framing;
    },
    send(message) {
      if (framing !== undefined) return { kind: 'write', bytes: encodeMessage(message, framing) };
      if (probe === undefined) {
        probe = { message, id: idOf(message), resent: false, answered: false };
        return { kind: 'probe', bytes: encodeMessage(message, 'ndjson') };
      }
      return held.length >= maxHeld ? { kind: 'full' } : { kind: 'hold' };
    },
    hold(entry) {
      held.push(entry);
    },
    detected(found) {
      framing = found;
      resendAfterChunk = found === 'contentLength' && probe !== undefined && !probe.resent;
    },
    receive(message) {
      if (probe !== undefined && probe.id !== undefined && isResponse(message) && message.id === probe.id) {
        if (probe.answered && probe.resent) return 'drop';
        probe.answered = true;
      }
      return 'deliver';
    },
    endOfChunk() {
      let resend: Buffer | undefined;
      if (resendAfterChunk) {
        resendAfterChunk = false;
        if (probe !== undefined && !probe.answered) resend = resendProbe();
      }
      return { resend, release: framing !== undefined && held.length > 0 ? release(framing) : [] };
    },
    windowElapsed() {
      return framing === undefined ? resendProbe() : undefined;
    },
    abandon() {
      return held.splice(0);
    },
  };
}

function idOf(message: JSONRPCMessage): string | number | undefined {
  return 'id' in message && (typeof message.id === 'string' || typeof message.id === 'number') ? message.id : undefined;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: string | number } {
  return 'id' in message && message.id !== undefined && !('method' in message);
}
