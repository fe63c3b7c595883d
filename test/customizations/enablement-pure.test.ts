/**
 * The pure parts of enablement: how decisions resolve and what is kept, the state file and
 * Redis field formats, the toggle body and who may set which scope, and the roots answer.
 */
import { describe, expect, it } from 'vitest';
import { decisionToKeep, effective, entriesFor, inherited, type StoredDecisions } from '../../src/customizations/enablement/decisions.js';
import { createFileStore, parseStateFile, serialiseStateFile } from '../../src/customizations/enablement/file-store.js';
import { tempDir } from '../plugins/plugin-test-helpers.js';
import { parseField } from '../../src/customizations/enablement/redis-store.js';
import { DecisionTable } from '../../src/customizations/enablement/store.js';
import { mayToggle, parseToggle } from '../../src/customizations/toggle-check.js';
import { firstRoot } from '../../src/routing/roots-workspace.js';

const stored = (global: Record<string, boolean>, workspaces: Record<string, Record<string, boolean>> = {}): StoredDecisions => ({
  global: new Map(Object.entries(global)),
  workspaces: new Map(Object.entries(workspaces).map(([w, d]) => [w, new Map(Object.entries(d))])),
});
const configDisables = (key: string) => key !== 'off';

describe('enablement decisions', () => {
  it('lists only explicit decisions, most specific first, the config\'s false as a global one', () => {
    const decisions = stored({ k: false }, { ws: { k: true } });
    const session = new Map([['k', false]]);
    expect(entriesFor('k', { session, workspace: 'ws' }, decisions, configDisables)).toEqual([
      { kind: 'session', enabled: false },
      { kind: 'workspace', uri: 'ws', enabled: true },
      { kind: 'global', enabled: false },
    ]);
    expect(entriesFor('k', { workspace: 'other' }, decisions, configDisables)).toEqual([{ kind: 'global', enabled: false }]);
    expect(entriesFor('off', {}, stored({}), configDisables)).toEqual([{ kind: 'global', enabled: false }]);
    expect(entriesFor('off', {}, stored({ off: true }), configDisables)).toEqual([{ kind: 'global', enabled: true }]);
    expect(entriesFor('free', {}, stored({}), configDisables)).toEqual([]);
  });

  it.each([
    [undefined, true],
    [[], true],
    [[{ kind: 'global' as const, enabled: false }], false],
    [[{ kind: 'session' as const, enabled: true }, { kind: 'global' as const, enabled: false }], true],
  ])('takes the first entry as effective (%j → %s)', (entries, expected) => {
    expect(effective(entries)).toBe(expected);
  });

  it('inherits session ← workspace ← global ← config, and keeps only what differs', () => {
    const decisions = stored({ k: false }, { ws: { k: true } });
    expect(inherited('global', 'k', undefined, decisions, configDisables)).toBe(true);
    expect(inherited('global', 'off', undefined, decisions, configDisables)).toBe(false);
    expect(inherited('workspace', 'k', 'ws', decisions, configDisables)).toBe(false);
    expect(inherited('session', 'k', 'ws', decisions, configDisables)).toBe(true);
    expect(inherited('session', 'k', 'none', decisions, configDisables)).toBe(false);
    expect(decisionToKeep(true, true)).toBeUndefined();
    expect(decisionToKeep(false, true)).toBe(false);
  });
});

describe('the stores\' formats', () => {
  it('saves and reloads decisions of workspaces named like Object.prototype members (__proto__, constructor)', async () => {
    const stateDir = tempDir('portcullis-enablement-');
    const store = createFileStore(stateDir);
    await store.load();
    for (const workspace of ['__proto__', 'constructor', 'toString']) await store.write({ scope: 'workspace', workspace }, 'plugin:p', false);
    await store.close();
    const reloaded = await createFileStore(stateDir).load();
    for (const workspace of ['__proto__', 'constructor', 'toString']) expect(reloaded.workspaces.get(workspace)?.get('plugin:p')).toBe(false);
  });

  it('round-trips the state file and refuses one it did not write', () => {
    const table = new DecisionTable();
    table.apply({ scope: 'global' }, 'config#mcp=a', false);
    table.apply({ scope: 'workspace', workspace: 'file:///w' }, 'plugin:p', true);
    const text = serialiseStateFile(table);
    const back = parseStateFile(text);
    expect(Object.fromEntries(back.global)).toEqual({ 'config#mcp=a': false });
    expect(Object.fromEntries(back.workspaces.get('file:///w')!)).toEqual({ 'plugin:p': true });
    table.apply({ scope: 'workspace', workspace: 'file:///w' }, 'plugin:p', undefined);
    expect(table.workspaces.size).toBe(0); // an emptied workspace is dropped, not kept empty
    for (const bad of ['[]', '{"version":2}', '{"version":1,"global":{"k":1}}', '{"version":1,"workspaces":[]}', 'nope']) {
      expect(() => parseStateFile(bad)).toThrow();
    }
  });

  it('reads back only the Redis fields it writes', () => {
    expect(parseField('["global","config#mcp=a"]', '0')).toEqual({ where: { scope: 'global' }, key: 'config#mcp=a', value: false });
    expect(parseField('["workspace","file:///w","k"]', '1')).toEqual({ where: { scope: 'workspace', workspace: 'file:///w' }, key: 'k', value: true });
    for (const [field, value] of [['["global","k"]', 'yes'], ['global:k', '1'], ['["global"]', '1'], ['["other","k"]', '1'], ['["global",1]', '1']]) {
      expect(parseField(field!, value!)).toBeUndefined();
    }
  });
});

describe('toggle checks', () => {
  it('accepts exactly { id, enabled, scope, workspace? }', () => {
    expect(parseToggle({ id: 'x', enabled: false, scope: 'session' })).toEqual({ ok: true, value: { id: 'x', enabled: false, scope: 'session' } });
    expect(parseToggle({ id: 'x', enabled: true, scope: 'workspace', workspace: 'file:///w' })).toMatchObject({ ok: true });
    for (const bad of [null, [], 'x', { id: 'x', enabled: 1, scope: 'global' }, { id: '', enabled: true, scope: 'global' }, { id: 'x'.repeat(65), enabled: true, scope: 'global' }, { id: 'x', enabled: true, scope: 'Global' }, { id: 'x', enabled: true, scope: 'session', workspace: 'w' }, { id: 'x', enabled: true, scope: 'workspace', workspace: 'w'.repeat(3000) }, { id: 'x', enabled: true, scope: 'global', __proto__x: 1 }]) {
      expect(parseToggle(bad).ok).toBe(false);
    }
  });

  it.each([
    ['session', { principal: 'bob', hasSession: true }, false, true],
    ['session', { principal: 'alice', hasSession: false }, true, false],
    ['global', { principal: 'alice', hasSession: false }, false, true],
    ['workspace', { principal: 'bob', hasSession: true }, false, false],
    ['global', { principal: undefined, hasSession: false }, false, false],
    ['global', { principal: undefined, hasSession: false }, true, true],
  ] as const)('scope %s for %j (open to local: %s) → %s', (scope, caller, openToLocal, allowed) => {
    expect(mayToggle(scope, caller, { admins: new Set(['alice']), openToLocal }).ok).toBe(allowed);
  });
});

describe('the workspace from roots', () => {
  it.each([
    [{ roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] }, { known: true, uri: 'file:///a' }],
    [{ roots: [] }, { known: true, uri: undefined }],
    [{}, { known: false }],
    [{ roots: [{ uri: 7 }] }, { known: false }],
    [{ roots: [{ uri: 'file:///a\nb' }] }, { known: false }],
    [{ roots: [{ uri: `file:///${'x'.repeat(3000)}` }] }, { known: false }],
  ])('reads %j as %j', (result, expected) => {
    expect(firstRoot(result)).toEqual(expected);
  });
});
