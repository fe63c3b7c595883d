import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import {
  assignNames,
  MAX_NAME_LENGTH,
  nameHash,
  namespacedName,
  sanitizeName,
  shortenName,
  type NameAssignment,
  type UpstreamName,
} from '../../src/naming/names.js';

const VALID = /^[A-Za-z0-9_.-]{1,64}$/;

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** Everything observable about an assignment, as plain data. */
function snapshot(assignment: NameAssignment) {
  return { byExposed: [...assignment.byExposed], collisions: assignment.collisions };
}

const e = (server: string, name: string): UpstreamName => ({ server, name });

describe('namespacedName', () => {
  it.each([
    ['files', 'read', '__', 'files__read'],
    ['files', 'read', '.', 'files.read'],
    ['files', 'read', '-', 'files-read'],
    ['files', 'read', null, 'read'],
    ['a', '', '__', 'a__'],
  ])('joins %j and %j with %j into %j', (server, name, separator, expected) => {
    expect(namespacedName(server, name, separator)).toBe(expected);
  });
});

describe('sanitizeName', () => {
  it.each([
    ['read_file', 'read_file'],
    ['a.b-c_D9', 'a.b-c_D9'],
    ['a b', 'a_b'],
    ['a/b', 'a_b'],
    ['a:b,c', 'a_b_c'],
    ['ünïcode', '_n_code'],
    ['😀x', '_x'],
    ['', '_'],
    ['a\u0000b', 'a_b'],
  ])('turns %j into %j', (input, expected) => {
    expect(sanitizeName(input)).toBe(expected);
  });
});

describe('nameHash', () => {
  it('is the first 8 hex characters of sha256', () => {
    const expected = createHash('sha256').update('files__read', 'utf8').digest('hex').slice(0, 8);
    expect(nameHash('files__read')).toBe(expected);
    expect(nameHash('files__read')).toMatch(/^[0-9a-f]{8}$/);
  });
});

describe('shortenName', () => {
  const long = `${'s'.repeat(48)}__${'very_long_tool_name_'.repeat(4)}`;

  it.each([
    ['short', 'short'],
    ['a'.repeat(64), 'a'.repeat(64)],
    ['needs sanitising', 'needs_sanitising'],
  ])('leaves a name that fits alone, only sanitised: %j', (input, expected) => {
    expect(shortenName(input)).toBe(expected);
  });

  it('cuts a long name to exactly 64 characters: readable prefix, "_" and an 8-hex hash of the original', () => {
    const short = shortenName(long);
    expect(short).toHaveLength(64);
    expect(short).toBe(`${long.slice(0, 55)}_${nameHash(long)}`);
    expect(short).toMatch(VALID);
  });

  it('cuts a 65-character name too (the boundary)', () => {
    const name = 'b'.repeat(65);
    expect(shortenName(name)).toBe(`${'b'.repeat(55)}_${nameHash(name)}`);
  });

  it('is deterministic', () => {
    expect(shortenName(long)).toBe(shortenName(long));
  });

  it('gives long names that share a prefix different results', () => {
    const a = `${'p'.repeat(70)}_a`;
    const b = `${'p'.repeat(70)}_b`;
    expect(shortenName(a)).not.toBe(shortenName(b));
    expect(shortenName(a).slice(0, 55)).toBe(shortenName(b).slice(0, 55));
  });

  it('hashes the original, so long names that sanitise alike still differ', () => {
    const a = `${'q'.repeat(70)} x`;
    const b = `${'q'.repeat(70)}/x`;
    expect(shortenName(a)).not.toBe(shortenName(b));
  });

  it('measures length after sanitising (one "_" per code point)', () => {
    const name = `${'😀'.repeat(64)}`;
    expect(name.length).toBe(128);
    expect(shortenName(name)).toBe('_'.repeat(64));
  });

  it.each([
    [10, 10],
    [20, 20],
    [128, 128],
  ])('honours max=%i', (max, length) => {
    const out = shortenName('z'.repeat(300), max);
    expect(out).toHaveLength(length);
    expect(out.endsWith(`_${nameHash('z'.repeat(300))}`)).toBe(true);
  });

  it.each([9, 0, -1, 12.5, Number.NaN])('refuses max=%s, which leaves no room for a prefix and the hash', (max) => {
    expect(() => shortenName('x', max)).toThrow(TypeError);
  });
});

describe('assignNames', () => {
  it('exposes <server><sep><name> when nothing collides', () => {
    const names = assignNames([e('files', 'read'), e('docs', 'search')], '__');
    expect([...names.byExposed]).toEqual([
      ['docs__search', e('docs', 'search')],
      ['files__read', e('files', 'read')],
    ]);
    expect(names.exposedFor('files', 'read')).toBe('files__read');
    expect(names.collisions).toEqual([]);
  });

  it('returns undefined for a name it was not given', () => {
    const names = assignNames([e('files', 'read')], '__');
    expect(names.exposedFor('files', 'write')).toBeUndefined();
    expect(names.exposedFor('other', 'read')).toBeUndefined();
  });

  it('with separator null, the first server in code-unit order keeps a shared name and the other is renamed', () => {
    const names = assignNames([e('web', 'search'), e('docs', 'search')], null);
    expect(names.exposedFor('docs', 'search')).toBe('search');
    const renamed = `search_${nameHash('web\u0000search')}`;
    expect(names.exposedFor('web', 'search')).toBe(renamed);
    expect(names.collisions).toEqual([
      { exposed: 'search', kept: e('docs', 'search'), renamed: [{ ...e('web', 'search'), exposed: renamed }] },
    ]);
  });

  it('orders by code units, not locale (uppercase sorts before lowercase)', () => {
    const names = assignNames([e('alpha', 'x'), e('Zulu', 'x')], null);
    expect(names.exposedFor('Zulu', 'x')).toBe('x');
    expect(names.exposedFor('alpha', 'x')).not.toBe('x');
  });

  it('resolves names made ambiguous by the separator occurring inside names', () => {
    const names = assignNames([e('a', 'b__c'), e('a__b', 'c')], '__');
    expect(names.exposedFor('a', 'b__c')).toBe('a__b__c');
    expect(names.exposedFor('a__b', 'c')).toBe(`a__b__c_${nameHash('a__b\u0000c')}`);
    expect(names.collisions).toHaveLength(1);
  });

  it('resolves collisions created by sanitising', () => {
    const names = assignNames([e('s', 'a b'), e('s', 'a/b'), e('s', 'a_b')], '__');
    expect([...names.byExposed.keys()].sort()).toHaveLength(3);
    // 'a b' < 'a/b' < 'a_b' in code units, so 'a b' keeps the sanitised name.
    expect(names.exposedFor('s', 'a b')).toBe('s__a_b');
    expect(names.exposedFor('s', 'a/b')).toBe(`s__a_b_${nameHash('s\u0000a/b')}`);
    expect(names.exposedFor('s', 'a_b')).toBe(`s__a_b_${nameHash('s\u0000a_b')}`);
    expect(names.collisions).toEqual([
      {
        exposed: 's__a_b',
        kept: e('s', 'a b'),
        renamed: [
          { ...e('s', 'a/b'), exposed: `s__a_b_${nameHash('s\u0000a/b')}` },
          { ...e('s', 'a_b'), exposed: `s__a_b_${nameHash('s\u0000a_b')}` },
        ],
      },
    ]);
  });

  it('never lets a rename take a name another tool wants plainly; it salts and tries again', () => {
    const firstChoice = `x_${nameHash('b\u0000x')}`;
    const names = assignNames([e('a', 'x'), e('b', 'x'), e('c', firstChoice)], null);
    expect(names.exposedFor('a', 'x')).toBe('x');
    expect(names.exposedFor('c', firstChoice)).toBe(firstChoice);
    expect(names.exposedFor('b', 'x')).toBe(`x_${nameHash('b\u0000x\u00001')}`);
  });

  it('keeps every name within 64 characters, valid and unique with 48-character server names', () => {
    const servers = ['a'.repeat(48), `${'a'.repeat(47)}b`, 'short'];
    const tools = ['read', 'x'.repeat(20), 'y'.repeat(100), `${'y'.repeat(100)}2`, 'spaces and/slashes', ''];
    const entries = servers.flatMap((server) => tools.map((name) => e(server, name)));
    const names = assignNames(entries, '__');
    expect(names.byExposed.size).toBe(entries.length);
    for (const entry of entries) {
      const exposed = names.exposedFor(entry.server, entry.name);
      expect(exposed).toMatch(VALID);
      expect(names.byExposed.get(exposed as string)).toEqual(entry);
    }
    expect(names.exposedFor('short', 'read')).toBe('short__read');
    expect(names.exposedFor('a'.repeat(48), 'x'.repeat(20))).toHaveLength(MAX_NAME_LENGTH);
  });

  it('keeps renamed names within a smaller maxLength', () => {
    const names = assignNames([e('a', 'tool'), e('b', 'tool')], null, { maxLength: 12 });
    for (const exposed of names.byExposed.keys()) expect(exposed.length).toBeLessThanOrEqual(12);
    expect(names.byExposed.size).toBe(2);
  });

  it('resolves a collision between a shortened name and a tool literally named the same', () => {
    const long = 'q'.repeat(100);
    const shortened = shortenName(long);
    const names = assignNames([e('b', shortened), e('a', long)], null);
    expect(names.exposedFor('a', long)).toBe(shortened);
    const renamed = names.exposedFor('b', shortened);
    expect(renamed).toBe(`${shortened.slice(0, 55)}_${nameHash(`b\u0000${shortened}`)}`);
    expect(renamed).toHaveLength(64);
    expect(names.collisions.map((c) => c.exposed)).toEqual([shortened]);
  });

  it('treats a repeated entry as one', () => {
    const names = assignNames([e('s', 'x'), e('s', 'x')], '__');
    expect([...names.byExposed]).toEqual([['s__x', e('s', 'x')]]);
    expect(names.collisions).toEqual([]);
  });

  const scenarios: Array<[what: string, entries: UpstreamName[], separator: string | null]> = [
    ['plain names', [e('a', 'x'), e('b', 'y'), e('c', 'z'), e('a', 'y')], '__'],
    ['shared names without namespacing', [e('a', 'x'), e('b', 'x'), e('c', 'x'), e('c', 'y'), e('b', 'y')], null],
    ['sanitising collisions', [e('s', 'a b'), e('s', 'a/b'), e('s', 'a:b'), e('t', 'a b'), e('s', 'a_b')], '__'],
    ['separator ambiguity', [e('a', 'b__c'), e('a__b', 'c'), e('a', 'b'), e('a__b', 'd'), e('a', 'b__d')], '__'],
    [
      'long names',
      [e('L'.repeat(48), 'q'.repeat(80)), e('L'.repeat(48), `${'q'.repeat(80)}!`), e('M', 'q'), e('L'.repeat(48), 'r')],
      '__',
    ],
  ];

  it.each(scenarios)('gives identical names and collisions for every input order: %s', (_what, entries, separator) => {
    const expected = snapshot(assignNames(entries, separator));
    for (const order of permutations(entries)) {
      expect(snapshot(assignNames(order, separator))).toEqual(expected);
    }
    expect(expected.byExposed).toHaveLength(entries.length);
  });
});
