/**
 * The customisation list as a narrowed caller sees it (customizations/access-filter.ts): servers
 * its profile hides are left out at the top level and among a plugin's children, a plugin of only
 * such servers goes with them, agents stay without their tool names, and a caller nothing is
 * hidden from gets the list itself.
 */
import { describe, expect, it } from 'vitest';
import { customizationsFor, showsId } from '../../src/customizations/access-filter.js';
import type { Customization, McpServerCustomization } from '../../src/customizations/types.js';
import { compileAccessPolicy } from '../../src/policy/access-policy.js';

const server = (name: string): McpServerCustomization => ({ type: 'mcpServer', id: `id-${name}`, uri: 'file:///config.json', name, state: { kind: 'ready' } });

const items: Customization[] = [
  server('github'),
  server('secrets'),
  { type: 'agent', id: 'a1', uri: 'file:///agents/triage.md', name: 'triage', tools: ['secrets__read', 'github__search'] },
  { type: 'plugin', id: 'p1', uri: 'file:///plugins/vault', name: 'vault', children: [server('vault-kv')] },
  { type: 'plugin', id: 'p2', uri: 'file:///plugins/mixed', name: 'mixed', children: [server('docs'), server('vault-pki')] },
  { type: 'plugin', id: 'p3', uri: 'file:///plugins/empty', name: 'empty', children: [] },
];

const access = compileAccessPolicy({
  default: 'allow',
  rules: [{ name: 'interns', claims: { groups: ['interns'] }, effect: 'deny', servers: ['secrets', 'vault-*'] }],
});

const names = (list: readonly Customization[]): string[] =>
  list.flatMap((item) => (item.type === 'plugin' ? [item.name, ...(item.children ?? []).map((c) => `${item.name}/${c.name}`)] : [item.name]));

describe('the customisation list of a narrowed caller', () => {
  it('leaves out hidden servers, plugins of nothing else, and agent tool names', () => {
    const shown = customizationsFor(items, access.profileFor({ principal: 'ivy', claims: { groups: ['interns'] } }));
    expect(names(shown)).toEqual(['github', 'triage', 'mixed', 'mixed/docs', 'empty']);
    const agent = shown.find((item) => item.type === 'agent');
    expect(agent).toBeDefined();
    expect(agent && 'tools' in agent).toBe(false);
    expect(JSON.stringify(shown)).not.toMatch(/secrets|vault-/);
  });

  it('is the list itself for a caller nothing is hidden from', () => {
    expect(customizationsFor(items, access.profileFor({ principal: 'kate', claims: { groups: ['eng'] } }))).toBe(items);
    expect(customizationsFor(items, undefined)).toBe(items);
  });

  it.each([
    ['a shown server', 'id-github', true],
    ['a hidden server', 'id-secrets', false],
    ['a shown child of a plugin', 'id-docs', true],
    ['a hidden child of a shown plugin', 'id-vault-pki', false],
    ['a plugin of nothing but hidden servers', 'p1', false],
    ['an agent', 'a1', true],
    ['an id nobody has', 'id-nope', false],
  ])('acts on %s only when the caller\'s list shows it', (_what, id, shown) => {
    const ivy = access.profileFor({ principal: 'ivy', claims: { groups: ['interns'] } });
    expect(showsId(items, ivy, id)).toBe(shown);
    // Nothing is hidden from a caller the rules do not narrow: every listed id is shown.
    expect(showsId(items, access.profileFor({ principal: 'root' }), id)).toBe(id !== 'id-nope');
  });
});
