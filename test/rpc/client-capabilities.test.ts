import { describe, expect, it } from 'vitest';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { checkServerRequest, elicitationModes } from '../../src/rpc/client-capabilities.js';

type Case = [string, ClientCapabilities | undefined, string, Record<string, unknown> | undefined, true | 'CLIENT_CAPABILITY_MISSING' | 'CLIENT_FEATURE_MISSING'];

const URL_MODE = { mode: 'url', message: 'm', url: 'https://example.com', elicitationId: 'e' };
const TOOLS = { messages: [], maxTokens: 1, tools: [{ name: 't', inputSchema: { type: 'object' } }] };

const cases: Case[] = [
  ['roots/list without roots', {}, 'roots/list', undefined, 'CLIENT_CAPABILITY_MISSING'],
  ['roots/list with roots', { roots: {} }, 'roots/list', undefined, true],
  ['roots/list when nothing is known (fail closed)', undefined, 'roots/list', undefined, 'CLIENT_CAPABILITY_MISSING'],
  ['sampling without sampling', { roots: {} }, 'sampling/createMessage', { messages: [], maxTokens: 1 }, 'CLIENT_CAPABILITY_MISSING'],
  ['sampling with sampling', { sampling: {} }, 'sampling/createMessage', { messages: [], maxTokens: 1 }, true],
  ['tool-enabled sampling without sampling.tools', { sampling: {} }, 'sampling/createMessage', TOOLS, 'CLIENT_FEATURE_MISSING'],
  ['toolChoice without sampling.tools', { sampling: {} }, 'sampling/createMessage', { toolChoice: { mode: 'auto' } }, 'CLIENT_FEATURE_MISSING'],
  ['tool-enabled sampling with sampling.tools', { sampling: { tools: {} } }, 'sampling/createMessage', TOOLS, true],
  ['elicitation without elicitation', { sampling: {} }, 'elicitation/create', { message: 'm' }, 'CLIENT_CAPABILITY_MISSING'],
  ['form elicitation with an empty elicitation (form only)', { elicitation: {} }, 'elicitation/create', { message: 'm' }, true],
  ['url elicitation with an empty elicitation (form only)', { elicitation: {} }, 'elicitation/create', URL_MODE, 'CLIENT_FEATURE_MISSING'],
  ['url elicitation with form only', { elicitation: { form: {} } }, 'elicitation/create', URL_MODE, 'CLIENT_FEATURE_MISSING'],
  ['form elicitation with url only', { elicitation: { url: {} } }, 'elicitation/create', { mode: 'form', message: 'm' }, 'CLIENT_FEATURE_MISSING'],
  ['url elicitation with url', { elicitation: { url: {} } }, 'elicitation/create', URL_MODE, true],
  ['ping always', {}, 'ping', undefined, true],
  ['a method this check does not know is left to the client', {}, 'vendor/thing', undefined, true],
];

describe('checkServerRequest', () => {
  it.each(cases)('%s', (_name, capabilities, method, params, expected) => {
    const verdict = checkServerRequest(capabilities, method, params);
    if (expected === true) expect(verdict).toEqual({ ok: true });
    else expect(verdict).toMatchObject({ ok: false, code: expected });
  });

  it('names the missing capability and the method, never the params', () => {
    const verdict = checkServerRequest({}, 'sampling/createMessage', { messages: [{ content: 'secret prompt' }] });
    expect(verdict).toEqual({
      ok: false,
      code: 'CLIENT_CAPABILITY_MISSING',
      message: 'the client did not declare the sampling capability (needed for sampling/createMessage)',
    });
  });
});

describe('elicitationModes', () => {
  it.each([
    [undefined, { form: false, url: false }],
    [{}, { form: true, url: false }],
    [{ form: {} }, { form: true, url: false }],
    [{ url: {} }, { form: false, url: true }],
    [{ form: {}, url: {} }, { form: true, url: true }],
  ])('%j allows %j', (capability, modes) => {
    expect(elicitationModes(capability as ClientCapabilities['elicitation'])).toEqual(modes);
  });
});
