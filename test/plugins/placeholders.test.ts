import { describe, expect, it } from 'vitest';
import { expandPlaceholders, leadingPlaceholder, placeholdersFor, reservedEnv } from '../../src/plugins/placeholders.js';

const standard = placeholdersFor('agent-plugins');
const claude = placeholdersFor('claude-code');
const paths = { root: '/plugins/acme', data: '/state/plugin-data/acme' };

describe('placeholder expansion (Agent Plugins 1.0 §9.2)', () => {
  it('replaces every exact occurrence of both placeholders', () => {
    expect(expandPlaceholders('${PLUGIN_ROOT}/a:${PLUGIN_DATA}/b:${PLUGIN_ROOT}', standard, paths)).toBe(
      '/plugins/acme/a:/state/plugin-data/acme/b:/plugins/acme',
    );
  });

  it('expands once: a placeholder inside a replacement stays literal', () => {
    const tricky = { root: '/plugins/${PLUGIN_DATA}', data: '/state/${PLUGIN_ROOT}' };
    expect(expandPlaceholders('${PLUGIN_ROOT}|${PLUGIN_DATA}', standard, tricky)).toBe('/plugins/${PLUGIN_DATA}|/state/${PLUGIN_ROOT}');
  });

  it('inserts replacement text verbatim, even when it looks like a replacement pattern', () => {
    expect(expandPlaceholders('${PLUGIN_ROOT}', standard, { root: "/p/$&$'$1", data: '/d' })).toBe("/p/$&$'$1");
  });

  it('leaves every other ${…} literal: nothing from the gateway environment is substituted', () => {
    expect(expandPlaceholders('${HOME} ${PATH} ${plugin_root} $PLUGIN_ROOT ${PLUGIN_ROOT', standard, paths)).toBe(
      '${HOME} ${PATH} ${plugin_root} $PLUGIN_ROOT ${PLUGIN_ROOT',
    );
  });

  it('recognises the CLAUDE_ spellings only in the Claude Code layout', () => {
    expect(expandPlaceholders('${CLAUDE_PLUGIN_ROOT}', standard, paths)).toBe('${CLAUDE_PLUGIN_ROOT}');
    expect(expandPlaceholders('${CLAUDE_PLUGIN_ROOT}|${CLAUDE_PLUGIN_DATA}', claude, paths)).toBe('/plugins/acme|/state/plugin-data/acme');
  });
});

describe('the variables a plugin child gets', () => {
  it('sets PLUGIN_ROOT and PLUGIN_DATA (and the CLAUDE_ names in that layout)', () => {
    expect(reservedEnv(standard, paths)).toEqual({ PLUGIN_ROOT: paths.root, PLUGIN_DATA: paths.data });
    expect(reservedEnv(claude, paths)).toEqual({
      PLUGIN_ROOT: paths.root,
      PLUGIN_DATA: paths.data,
      CLAUDE_PLUGIN_ROOT: paths.root,
      CLAUDE_PLUGIN_DATA: paths.data,
    });
  });
});

describe('cwd forms', () => {
  it.each([
    ['${PLUGIN_ROOT}', { name: 'PLUGIN_ROOT', root: true }],
    ['${PLUGIN_ROOT}/bin', { name: 'PLUGIN_ROOT', root: true }],
    ['${PLUGIN_DATA}', { name: 'PLUGIN_DATA', root: false }],
    ['${PLUGIN_DATA}/cache', { name: 'PLUGIN_DATA', root: false }],
    ['${PLUGIN_ROOT}bin', undefined],
    ['x/${PLUGIN_ROOT}', undefined],
    ['/abs', undefined],
  ])('%s starts with %j', (value, expected) => {
    expect(leadingPlaceholder(value, standard)).toEqual(expected);
  });
});
