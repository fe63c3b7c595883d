import { describe, expect, it } from 'vitest';

import { compileGlob, compileToolFilter, type ToolFilterOptions } from '../../src/policy/tool-filter.js';

describe('compileToolFilter', () => {
  const cases: Array<{ what: string; options: ToolFilterOptions; allowed: string[]; hidden: string[] }> = [
    {
      what: 'allows every name when both lists are empty',
      options: { enabledTools: [], disabledTools: [] },
      allowed: ['read', 'write', 'x'],
      hidden: [],
    },
    {
      what: 'allows only enabled names when enabledTools is not empty',
      options: { enabledTools: ['read', 'list'], disabledTools: [] },
      allowed: ['read', 'list'],
      hidden: ['write', 'reader', ''],
    },
    {
      what: 'hides disabled names',
      options: { enabledTools: [], disabledTools: ['write_file'] },
      allowed: ['read_file', 'write_file_2'],
      hidden: ['write_file'],
    },
    {
      what: 'lets disabledTools win over enabledTools',
      options: { enabledTools: ['read', 'write'], disabledTools: ['write'] },
      allowed: ['read'],
      hidden: ['write'],
    },
    {
      what: 'matches exact names case-sensitively, as MCP tool names are',
      options: { enabledTools: ['Read'], disabledTools: ['Write'] },
      allowed: ['Read'],
      hidden: ['read', 'READ'],
    },
    {
      what: 'treats exact names literally, never as patterns',
      options: { enabledTools: ['a*', 'b?c'], disabledTools: [] },
      allowed: ['a*', 'b?c'],
      hidden: ['abc', 'a', 'bxc'],
    },
    {
      what: 'hides names matching a denied glob',
      options: { enabledTools: [], disabledTools: [], deniedGlobs: ['*__delete_*'] },
      allowed: ['files__read', 'files__deleted', 'delete_x'],
      hidden: ['files__delete_all', 'FILES__DELETE_X', 'x__delete_'],
    },
    {
      what: 'lets denied globs win over enabledTools',
      options: { enabledTools: ['files__rm', 'files__ls'], disabledTools: [], deniedGlobs: ['*rm'] },
      allowed: ['files__ls'],
      hidden: ['files__rm'],
    },
  ];

  for (const { what, options, allowed, hidden } of cases) {
    it(what, () => {
      const filter = compileToolFilter(options);
      for (const name of allowed) expect(filter(name), name).toBe(true);
      for (const name of hidden) expect(filter(name), name).toBe(false);
    });
  }

  it.each([
    ['enabledTools', { enabledTools: [''], disabledTools: [] }],
    ['disabledTools', { enabledTools: [], disabledTools: [''] }],
    ['deniedGlobs', { enabledTools: [], disabledTools: [], deniedGlobs: [''] }],
  ])('refuses an empty %s entry at compile time, naming the field', (field, options) => {
    expect(() => compileToolFilter(options)).toThrow(new RegExp(field));
    expect(() => compileToolFilter(options)).toThrow(TypeError);
  });

  it('gives the same answer every time for the same name (one predicate serves list and call)', () => {
    const filter = compileToolFilter({ enabledTools: ['a', 'b'], disabledTools: ['b'], deniedGlobs: ['a?'] });
    const answers = Array.from({ length: 5 }, () => ['a', 'b', 'ab', 'c'].map(filter));
    for (const answer of answers) expect(answer).toEqual([true, false, false, false]);
  });

  it('composes with a second compiled filter for policy globs on namespaced names', () => {
    const perServer = compileToolFilter({ enabledTools: [], disabledTools: ['write_file'] });
    const policy = compileToolFilter({ enabledTools: [], disabledTools: [], deniedGlobs: ['*__exec*'] });
    const visible = (name: string, exposed: string): boolean => perServer(name) && policy(exposed);
    expect(visible('read_file', 'files__read_file')).toBe(true);
    expect(visible('write_file', 'files__write_file')).toBe(false);
    expect(visible('exec', 'shell__exec')).toBe(false);
  });
});

describe('compileGlob', () => {
  const cases: Array<[pattern: string, name: string, matches: boolean]> = [
    ['abc', 'abc', true],
    ['abc', 'ABC', true],
    ['ABC', 'abc', true],
    ['abc', 'abcd', false],
    ['abc', 'ab', false],
    ['*', '', true],
    ['*', 'anything at all', true],
    ['a*', 'a', true],
    ['a*', 'abc', true],
    ['a*', 'ba', false],
    ['*c', 'abc', true],
    ['*c', 'abcd', false],
    ['a*c', 'ac', true],
    ['a*c', 'abbbc', true],
    ['a*c', 'abbbcx', false],
    ['a**c', 'abc', true],
    ['*a*b*', 'xxaxxbxx', true],
    ['*a*b*', 'xxbxxaxx', false],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['a?c', 'abbc', false],
    ['??', 'ab', true],
    ['??', 'a', false],
    ['?', '😀', true],
    ['a.b', 'a.b', true],
    ['a.b', 'axb', false],
    ['(x)+', '(x)+', true],
    ['(x)+', 'xx', false],
    ['[ab]', '[ab]', true],
    ['[ab]', 'a', false],
    ['^a$', '^a$', true],
    ['a|b', 'a', false],
    ['a\\b', 'a\\b', true],
    ['{1,2}', '{1,2}', true],
    ['files__*', 'files__read', true],
    ['files__*', 'other__read', false],
    ['a*', 'a*', true],
    ['a?', 'a?', true],
    ['x*y', 'x\ny', true],
  ];

  it.each(cases)('matches %j against %j: %s', (pattern, name, matches) => {
    expect(compileGlob(pattern).test(name)).toBe(matches);
  });

  it('keeps the pattern as written for diagnostics', () => {
    expect(compileGlob('Files__*').pattern).toBe('Files__*');
  });

  it('answers quickly enough to finish on a long hostile name (no backtracking explosion)', () => {
    const glob = compileGlob('*a*a*a*a*a*a*a*b');
    expect(glob.test('a'.repeat(20_000))).toBe(false);
    expect(glob.test(`${'a'.repeat(20_000)}b`)).toBe(true);
  });

  it('refuses an empty pattern', () => {
    expect(() => compileGlob('')).toThrow(TypeError);
  });
});
