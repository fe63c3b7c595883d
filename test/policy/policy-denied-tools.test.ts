import { describe, expect, it } from 'vitest';
import { assignNames } from '../../src/naming/names.js';
import { canonicalToolName, compileDeniedTools } from '../../src/policy/denied-tools.js';

describe('compileDeniedTools', () => {
  /** [what, globs, server, upstream name, exposed name, allowed] */
  const cases: Array<[string, string[], string, string, string, boolean]> = [
    ['allows everything without globs', [], 'files', 'delete_all', 'files__delete_all', true],
    ['denies on the namespaced name', ['files__delete_*'], 'files', 'delete_all', 'files__delete_all', false],
    ['denies on the canonical name when the separator is "-"', ['files__delete_*'], 'files', 'delete_all', 'files-delete_all', false],
    ['denies on the canonical name when namespacing is off', ['files__delete_*'], 'files', 'delete_all', 'delete_all', false],
    ['denies on the canonical name on a side channel', ['files__delete_*'], 'files', 'delete_all', 'delete_all', false],
    ['denies a shortened, hash-suffixed name by its canonical name', ['files__' + 'x'.repeat(70)], 'files', 'x'.repeat(70), 'files__' + 'x'.repeat(46) + '_1a2b3c4d', false],
    ['denies a collision-renamed name by its canonical name', ['*__rm'], 'b', 'rm', 'b__rm_0badf00d', false],
    ['denies on the sanitised canonical name', ['files__delete_file'], 'files', 'delete file', 'delete_file', false],
    ['denies on the bare upstream name', ['delete_*'], 'files', 'delete_all', 'files__delete_all', false],
    ['matches case-insensitively', ['FILES__DELETE_*'], 'files', 'delete_all', 'files__delete_all', false],
    ['a server-specific glob leaves other servers alone', ['files__delete_*'], 'docs', 'delete_all', 'docs__delete_all', true],
    ['a suffix glob does not match a longer name', ['*__rm'], 'files', 'rm_safe', 'files__rm_safe', true],
    ['"?" is exactly one character', ['files__rm?'], 'files', 'rm', 'files__rm', true],
  ];
  it.each(cases)('%s', (_what, globs, server, name, exposed, allowed) => {
    expect(compileDeniedTools(globs)(server, name, exposed)).toBe(allowed);
  });

  it('denies every exposed form the catalogue can produce for a tool', () => {
    const check = compileDeniedTools(['files__purge*']);
    const long = `purge_${'y'.repeat(80)}`;
    for (const separator of ['__', '-', '.', null]) {
      const assignment = assignNames([{ server: 'files', name: long }, { server: 'files', name: 'read' }], separator);
      const exposed = assignment.exposedFor('files', long)!;
      expect(check('files', long, exposed), `separator ${String(separator)}`).toBe(false);
      expect(check('files', 'read', assignment.exposedFor('files', 'read')!)).toBe(true);
    }
  });

  it('throws TypeError for an empty glob', () => {
    expect(() => compileDeniedTools([''])).toThrow(TypeError);
  });

  it('names the canonical form server__tool', () => {
    expect(canonicalToolName('files', 'read')).toBe('files__read');
  });
});
