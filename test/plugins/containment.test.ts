import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWithin, resolveWithin } from '../../src/plugins/containment.js';
import { tempDir } from './plugin-test-helpers.js';

function layout() {
  const top = realpathSync(tempDir());
  const root = path.join(top, 'plugin');
  mkdirSync(path.join(root, 'bin'), { recursive: true });
  writeFileSync(path.join(root, 'bin', 'server'), '');
  writeFileSync(path.join(top, 'outside'), '');
  mkdirSync(path.join(top, 'elsewhere'));
  symlinkSync('../../outside', path.join(root, 'bin', 'escape'));
  symlinkSync(path.join(top, 'elsewhere'), path.join(root, 'linkdir'));
  symlinkSync('server', path.join(root, 'bin', 'inside'));
  symlinkSync('loop-b', path.join(root, 'loop-a'));
  symlinkSync('loop-a', path.join(root, 'loop-b'));
  return { top, root };
}

describe('package-path containment (Agent Plugins 1.0 §4.1)', () => {
  it('compares whole path segments, not string prefixes', () => {
    expect(isWithin('/a/plugin', '/a/plugin')).toBe(true);
    expect(isWithin('/a/plugin', '/a/plugin/x')).toBe(true);
    expect(isWithin('/a/plugin', '/a/plugin-evil/x')).toBe(false);
    expect(isWithin('/', '/anything')).toBe(true);
  });

  it('accepts a file inside the root and a symlink that stays inside', async () => {
    const { root } = layout();
    expect(await resolveWithin(root, path.join(root, 'bin', 'server'))).toEqual({ ok: true, path: path.join(root, 'bin', 'server'), exists: true });
    expect(await resolveWithin(root, path.join(root, 'bin', 'inside'))).toEqual({ ok: true, path: path.join(root, 'bin', 'server'), exists: true });
  });

  it('refuses ../ escapes before touching the filesystem', async () => {
    const { root } = layout();
    expect(await resolveWithin(root, path.join(root, 'bin', '..', '..', 'outside'))).toEqual({ ok: false, reason: 'escapes' });
  });

  it('refuses a symlinked file that leads out of the root', async () => {
    const { root } = layout();
    expect(await resolveWithin(root, path.join(root, 'bin', 'escape'))).toEqual({ ok: false, reason: 'escapes' });
  });

  it('refuses a path that does not exist yet below a symlinked directory leading out', async () => {
    const { root } = layout();
    expect(await resolveWithin(root, path.join(root, 'linkdir', 'not', 'yet'))).toEqual({ ok: false, reason: 'escapes' });
  });

  it('judges a path that does not exist yet by its deepest existing ancestor', async () => {
    const { root } = layout();
    expect(await resolveWithin(root, path.join(root, 'bin', 'new', 'dir'))).toEqual({ ok: true, path: path.join(root, 'bin', 'new', 'dir'), exists: false });
  });

  it('reports a symlink loop as unresolvable, not as inside', async () => {
    const { root } = layout();
    expect(await resolveWithin(root, path.join(root, 'loop-a'))).toEqual({ ok: false, reason: 'unresolvable' });
  });
});
