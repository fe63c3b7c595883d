import { describe, expect, it } from 'vitest';
import { PrincipalShare } from '../../src/policy/principal-share.js';

describe('PrincipalShare', () => {
  it('gives each principal at most its share, and one principal\'s places never count against another', () => {
    const share = new PrincipalShare(2);
    expect(share.take('alice')).toBeDefined();
    expect(share.take('alice')).toBeDefined();
    expect(share.take('alice')).toBeUndefined();
    expect(share.take('bob')).toBeDefined();
    expect(share.of('alice')).toBe(2);
    expect(share.of('bob')).toBe(1);
  });

  it('gives a place back once however often it is freed', () => {
    const share = new PrincipalShare(2);
    const free = share.take('alice')!;
    share.take('alice');
    free();
    free();
    expect(share.of('alice')).toBe(1);
  });

  it('counts several places at once and forgets a principal that holds none', () => {
    const share = new PrincipalShare(3);
    expect(share.fits('alice', 4)).toBe(false);
    share.add('alice', 3);
    expect(share.fits('alice')).toBe(false);
    share.add('alice', -5);
    expect(share.of('alice')).toBe(0);
    expect(share.fits('alice', 3)).toBe(true);
  });

  it('bounds the anonymous caller by nothing of its own', () => {
    const share = new PrincipalShare(1);
    expect(share.fits(undefined, 10)).toBe(true);
    share.add(undefined, 10);
    expect(share.take(undefined)).toBeDefined();
  });
});
