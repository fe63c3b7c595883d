import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { createContentLengthDecoder, type Framing, type FramingMode } from '../../src/upstream/framing.js';
import {
  createFramingNegotiation,
  createInboundDecoder,
  type FramingNegotiation,
  type HeldMessage,
} from '../../src/upstream/framing-negotiation.js';

const request = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'echo', params: {} });
const response = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: {} });
const noop = (): void => undefined;

/** `cl-probe#1`, `cl#2`, `ndjson#3`: the framing of written bytes and the id of the message in them. */
function describeBytes(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  const framing = text.startsWith('\r\nContent-Length:')
    ? 'cl-probe'
    : text.startsWith('Content-Length:')
      ? 'cl'
      : 'ndjson';
  return `${framing}#${/"id":(\d+)/.exec(text)?.[1] ?? '?'}`;
}

/**
 * Runs one step of a script against `negotiation` and describes what it answered:
 * `send N` (a request with id N), `detected <framing>`, `answer N` (a response with id N),
 * `request N` (a request from the child with id N), `end` (of a chunk), `window` (elapsed), `abandon`.
 */
function step(negotiation: FramingNegotiation, line: string): string {
  const [verb, arg = ''] = line.split(' ');
  switch (verb) {
    case 'send': {
      const message = request(Number(arg));
      const decision = negotiation.send(message);
      if (decision.kind === 'hold') negotiation.hold({ message, resolve: noop, reject: noop });
      return 'bytes' in decision ? `${decision.kind} ${describeBytes(decision.bytes)}` : decision.kind;
    }
    case 'detected':
      negotiation.detected(arg as Framing);
      return `framing ${negotiation.framing}`;
    case 'answer':
      return negotiation.receive(response(Number(arg)));
    case 'request':
      return negotiation.receive(request(Number(arg)));
    case 'end': {
      const { resend, release } = negotiation.endOfChunk();
      const parts = [
        ...(resend === undefined ? [] : [`resend ${describeBytes(resend)}`]),
        ...(release.length === 0
          ? []
          : [`release ${release.map((r) => ('bytes' in r ? describeBytes(r.bytes) : 'error')).join(',')}`]),
      ];
      return parts.length === 0 ? 'nothing' : parts.join('; ');
    }
    case 'window': {
      const resend = negotiation.windowElapsed();
      return resend === undefined ? 'nothing' : `resend ${describeBytes(resend)}`;
    }
    case 'abandon':
      return `abandon ${negotiation.abandon().map((held) => (held.message as { id: number }).id).join(',')}`;
    default:
      throw new Error(`unknown step ${line}`);
  }
}

describe('framing negotiation', () => {
  it.each<{ name: string; mode: FramingMode; maxHeld?: number; script: [string, string][] }>([
    {
      name: 'writes every message in a fixed ndjson framing at once',
      mode: 'ndjson',
      script: [
        ['send 1', 'write ndjson#1'],
        ['send 2', 'write ndjson#2'],
        ['answer 1', 'deliver'],
        ['end', 'nothing'],
        ['window', 'nothing'],
      ],
    },
    {
      name: 'writes every message in a fixed Content-Length framing at once',
      mode: 'contentLength',
      script: [
        ['send 1', 'write cl#1'],
        ['send 2', 'write cl#2'],
        ['answer 1', 'deliver'],
        ['answer 1', 'deliver'],
      ],
    },
    {
      name: 'probes with the first message as ndjson and holds the rest until the child speaks ndjson',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['send 2', 'hold'],
        ['send 3', 'hold'],
        ['end', 'nothing'],
        ['detected ndjson', 'framing ndjson'],
        ['answer 1', 'deliver'],
        ['end', 'release ndjson#2,ndjson#3'],
        ['send 4', 'write ndjson#4'],
        ['end', 'nothing'],
      ],
    },
    {
      name: 're-sends the unanswered probe once the child turns out to speak Content-Length',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['send 2', 'hold'],
        ['detected contentLength', 'framing contentLength'],
        ['request 7', 'deliver'],
        ['end', 'resend cl-probe#1; release cl#2'],
        ['answer 1', 'deliver'],
        ['end', 'nothing'],
        ['send 3', 'write cl#3'],
      ],
    },
    {
      name: 'does not re-send a probe a Content-Length child answered in the same chunk',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['detected contentLength', 'framing contentLength'],
        ['answer 1', 'deliver'],
        ['end', 'nothing'],
        ['window', 'nothing'],
      ],
    },
    {
      name: 're-sends the probe once when the detection window passes in silence',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['window', 'resend cl-probe#1'],
        ['window', 'nothing'],
        ['detected contentLength', 'framing contentLength'],
        ['answer 1', 'deliver'],
        ['end', 'nothing'],
      ],
    },
    {
      name: 'drops the second answer to a re-sent probe (a child that understood both framings)',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['window', 'resend cl-probe#1'],
        ['detected ndjson', 'framing ndjson'],
        ['answer 1', 'deliver'],
        ['answer 1', 'drop'],
        ['answer 2', 'deliver'],
      ],
    },
    {
      name: 'delivers a repeated answer when the probe was never re-sent',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['detected ndjson', 'framing ndjson'],
        ['answer 1', 'deliver'],
        ['answer 1', 'deliver'],
      ],
    },
    {
      name: 'does not take a request from the child that reuses the probe id for an answer',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['window', 'resend cl-probe#1'],
        ['detected ndjson', 'framing ndjson'],
        ['request 1', 'deliver'],
        ['answer 1', 'deliver'],
        ['answer 1', 'drop'],
      ],
    },
    {
      name: 'does not re-send once the framing is known, even if the window passes',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['detected ndjson', 'framing ndjson'],
        ['window', 'nothing'],
        ['end', 'nothing'],
      ],
    },
    {
      name: 'refuses messages beyond maxHeld while the framing is unknown',
      mode: 'auto',
      maxHeld: 2,
      script: [
        ['send 1', 'probe ndjson#1'],
        ['send 2', 'hold'],
        ['send 3', 'hold'],
        ['send 4', 'full'],
        ['detected contentLength', 'framing contentLength'],
        ['end', 'resend cl-probe#1; release cl#2,cl#3'],
        ['send 5', 'write cl#5'],
      ],
    },
    {
      name: 'hands back the held messages, in order, when the connection is abandoned',
      mode: 'auto',
      script: [
        ['send 1', 'probe ndjson#1'],
        ['send 2', 'hold'],
        ['send 3', 'hold'],
        ['abandon', 'abandon 2,3'],
        ['abandon', 'abandon '],
        ['detected ndjson', 'framing ndjson'],
        ['end', 'nothing'],
      ],
    },
  ])('$name', ({ mode, maxHeld, script }) => {
    const negotiation = createFramingNegotiation(mode, maxHeld === undefined ? {} : { maxHeld });
    expect(script.map(([line]) => `${line} → ${step(negotiation, line)}`)).toEqual(
      script.map(([line, answer]) => `${line} → ${answer}`),
    );
  });

  it('starts undecided only in auto mode', () => {
    expect(createFramingNegotiation('auto').framing).toBeUndefined();
    expect(createFramingNegotiation('ndjson').framing).toBe('ndjson');
    expect(createFramingNegotiation('contentLength').framing).toBe('contentLength');
  });

  it('re-sends the probe in bytes a Content-Length reader decodes to the original message', () => {
    const negotiation = createFramingNegotiation('auto');
    negotiation.send(request(1));
    const resend = negotiation.windowElapsed();
    expect(resend).toBeDefined();
    const events = createContentLengthDecoder().push(resend!);
    expect(events).toEqual([expect.objectContaining({ kind: 'message', value: request(1) })]);
  });

  it('releases a held message JSON cannot represent as an error, and the others as bytes', () => {
    const negotiation = createFramingNegotiation('auto');
    negotiation.send(request(1));
    const unrepresentable = { jsonrpc: '2.0', id: 2, method: 'echo', params: { n: 1n } } as unknown as JSONRPCMessage;
    const held: HeldMessage[] = [unrepresentable, request(3)].map((message) => ({
      message,
      resolve: noop,
      reject: noop,
    }));
    for (const entry of held) {
      expect(negotiation.send(entry.message).kind).toBe('hold');
      negotiation.hold(entry);
    }
    negotiation.detected('ndjson');
    const { release } = negotiation.endOfChunk();
    expect(release.map((r) => r.held)).toEqual(held);
    expect('error' in release[0]! && release[0].error).toBeInstanceOf(TypeError);
    expect('bytes' in release[1]! && describeBytes(release[1].bytes)).toBe('ndjson#3');
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses maxHeld %s at construction', (maxHeld) => {
    expect(() => createFramingNegotiation('auto', { maxHeld })).toThrow(TypeError);
  });
});

describe('inbound decoder per framing mode', () => {
  it.each<[FramingMode, string, string[]]>([
    ['auto', '{"jsonrpc":"2.0","id":1,"result":{}}\n', ['detected', 'message']],
    ['auto', 'Content-Length: 2\r\n\r\n{}', ['detected', 'message']],
    ['ndjson', '{"jsonrpc":"2.0","id":1,"result":{}}\n', ['message']],
    ['contentLength', 'Content-Length: 2\r\n\r\n{}', ['message']],
  ])('%s reads %j as %j', (mode, input, kinds) => {
    const decoder = createInboundDecoder(mode, {});
    expect(decoder.push(Buffer.from(input)).map((event) => event.kind)).toEqual(kinds);
  });
});
