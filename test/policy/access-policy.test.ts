/**
 * The pure evaluation of the policy's `access` rules: first match per item, claims and scopes,
 * server parts versus tools, allow globs stricter than deny globs, and profiles shared by callers
 * that match the same rules (the key list caches are built on).
 */
import { describe, expect, it } from 'vitest';
import { compileAccessPolicy, hidesNothing } from '../../src/policy/access-policy.js';

describe('access rules', () => {
  const access = compileAccessPolicy({
    default: 'deny',
    rules: [
      { name: 'no-deletes', effect: 'deny', tools: ['*delete*'] },
      { name: 'admins', principals: ['admin-*'], effect: 'allow' },
      { name: 'eng-github', claims: { groups: ['eng'] }, effect: 'allow', servers: ['github'] },
      { name: 'readers', scopes: ['mcp:read'], effect: 'allow', tools: ['docs__search'] },
    ],
  });

  it('decides each item by the first rule that matches the caller and covers the item', () => {
    const admin = access.profileFor({ principal: 'admin-ann' });
    expect(admin.tool('files', 'read', 'files__read')).toEqual({ allowed: true, rule: 'admins' });
    expect(admin.tool('files', 'delete_all', 'files__delete_all')).toEqual({ allowed: false, rule: 'no-deletes' });
    expect(admin.serverParts('files')).toEqual({ allowed: true, rule: 'admins' });
  });

  it('matches claims holding one of the values, as a string or in an array', () => {
    const eng = access.profileFor({ principal: 'e', claims: { groups: ['sales', 'eng'] } });
    expect(eng.tool('github', 'search', 'github__search').allowed).toBe(true);
    expect(eng.serverParts('github').allowed).toBe(true);
    expect(eng.tool('slack', 'post', 'slack__post')).toEqual({ allowed: false, rule: 'default' });
    expect(access.profileFor({ principal: 'e', claims: { groups: 'eng' } }).serverParts('github').allowed).toBe(true);
    expect(access.profileFor({ principal: 'e', claims: { groups: [1, { eng: true }] } }).serverParts('github').allowed).toBe(false);
  });

  it('lets a tools-only rule allow a tool without opening the rest of its server', () => {
    const reader = access.profileFor({ principal: 'r', scopes: ['mcp:read'] });
    expect(reader.tool('docs', 'search', 'docs__search').allowed).toBe(true);
    expect(reader.tool('docs', 'write', 'docs__write').allowed).toBe(false);
    expect(reader.serverParts('docs').allowed).toBe(false);
    expect(access.profileFor({ principal: 'r', scopes: ['mcp:write'] }).tool('docs', 'search', 'docs__search').allowed).toBe(false);
  });

  it('tries an allow glob on the exposed and canonical names only, a deny glob on every name', () => {
    const strict = compileAccessPolicy({ default: 'allow', rules: [{ effect: 'deny', tools: ['delete'] }] });
    // The bare upstream name matches a deny glob…
    expect(strict.profileFor({ principal: 'p' }).tool('files', 'delete', 'f__delete').allowed).toBe(false);
    const lax = compileAccessPolicy({ default: 'deny', rules: [{ effect: 'allow', tools: ['search'] }] });
    // …but never an allow glob: `search` must not open every server's `search`.
    expect(lax.profileFor({ principal: 'p' }).tool('docs', 'search', 'docs__search').allowed).toBe(false);
    expect(lax.profileFor({ principal: 'p' }).tool('docs', 'search', 'search').allowed).toBe(true);
  });

  it('gives callers matching the same rules one profile, others another', () => {
    const a = access.profileFor({ principal: 'x', claims: { groups: ['eng'] } });
    const b = access.profileFor({ principal: 'y', claims: { groups: ['eng'] } });
    const c = access.profileFor({ principal: 'admin-z', claims: { groups: ['eng'] } });
    expect(a).toBe(b);
    expect(a.key).not.toBe(c.key);
    expect(access.profileFor({ principal: undefined }).unrestricted).toBe(false);
  });

  it("finds a profile again by its key, and no profile for another policy's key or a forged one", () => {
    const eng = access.profileFor({ principal: 'x', claims: { groups: ['eng'] } });
    expect(access.profileOfKey(eng.key)).toBe(eng);
    // Another compile of the same rules (a peer replica) makes the same keys.
    const same = compileAccessPolicy({
      default: 'deny',
      rules: [
        { name: 'no-deletes', effect: 'deny', tools: ['*delete*'] },
        { name: 'admins', principals: ['admin-*'], effect: 'allow' },
        { name: 'eng-github', claims: { groups: ['eng'] }, effect: 'allow', servers: ['github'] },
        { name: 'readers', scopes: ['mcp:read'], effect: 'allow', tools: ['docs__search'] },
      ],
    });
    const there = same.profileOfKey(eng.key);
    expect(there?.key).toBe(eng.key);
    expect(there?.serverParts('github').allowed).toBe(true);
    // Other rules: the key names nothing of them.
    const other = compileAccessPolicy({ default: 'allow', rules: [{ effect: 'deny', servers: ['github'] }] });
    expect(other.profileOfKey(eng.key)).toBeUndefined();
    const prefix = eng.key.slice(0, eng.key.lastIndexOf(':') + 1);
    for (const forged of [`${prefix}9`, `${prefix}2,1`, `${prefix}01`, `${prefix}1,1`, `${prefix}x`, 'access:', '']) {
      expect(access.profileOfKey(forged)).toBeUndefined();
    }
    expect(access.profileOfKey(`${prefix}`)?.unrestricted).toBe(false);
  });

  it('leaves an unauthenticated caller only the rules that match everyone', () => {
    const anonymous = access.profileFor({ principal: undefined });
    expect(anonymous.tool('github', 'search', 'github__search').allowed).toBe(false);
    expect(anonymous.tool('files', 'delete', 'files__delete').rule).toBe('no-deletes');
  });

  it('knows when a policy can hide nothing', () => {
    expect(hidesNothing({ default: 'allow', rules: [] })).toBe(true);
    expect(hidesNothing({ default: 'deny', rules: [] })).toBe(false);
    expect(compileAccessPolicy({ default: 'allow', rules: [] }).profileFor({ principal: 'p' }).unrestricted).toBe(true);
  });
});
