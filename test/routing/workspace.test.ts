/**
 * The workspace a request names (`_meta["portcullis/workspace"]`): accepted only as a short,
 * printable string; anything else is refused, never silently ignored (a client that meant a
 * workspace and got the principal's default one would mix two projects' upstream state).
 */
import { describe, expect, it } from 'vitest';
import { MAX_WORKSPACE_LENGTH, workspaceOf } from '../../src/routing/workspace.js';

const request = (meta: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', _meta: meta } });

describe('workspaceOf', () => {
  const accepted: Array<[string, unknown, string | undefined]> = [
    ['no params', { jsonrpc: '2.0', id: 1, method: 'ping' }, undefined],
    ['no _meta', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, undefined],
    ['_meta without the key', request({ progressToken: 1 }), undefined],
    ['a plain name', request({ 'portcullis/workspace': 'repo-a' }), 'repo-a'],
    ['a file URI', request({ 'portcullis/workspace': 'file:///home/me/project' }), 'file:///home/me/project'],
    ['the longest allowed', request({ 'portcullis/workspace': 'w'.repeat(MAX_WORKSPACE_LENGTH) }), 'w'.repeat(MAX_WORKSPACE_LENGTH)],
    ['a batch (no params of its own)', [request({ 'portcullis/workspace': 'x' })], undefined],
    ['no body (GET)', undefined, undefined],
  ];
  for (const [name, message, workspace] of accepted) {
    it(`accepts ${name}`, () => expect(workspaceOf(message)).toEqual({ ok: true, workspace }));
  }

  const refused: Array<[string, unknown]> = [
    ['an empty string', ''],
    ['one character too long', 'w'.repeat(MAX_WORKSPACE_LENGTH + 1)],
    ['a number', 7],
    ['null', null],
    ['an object', { name: 'a' }],
    ['a newline', 'a\nb'],
    ['a DEL character', 'a\u007fb'],
    ['a C1 control', 'a\u0085b'],
  ];
  for (const [name, value] of refused) {
    it(`refuses ${name}`, () => {
      const check = workspaceOf(request({ 'portcullis/workspace': value }));
      expect(check.ok).toBe(false);
      if (!check.ok) expect(check.message).toContain('portcullis/workspace');
    });
  }
});
