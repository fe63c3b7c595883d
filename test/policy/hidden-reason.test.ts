/** `compileHiddenReason`: why a called name is not in the catalogue, for the audit log's decision. */
import { describe, expect, it } from 'vitest';
import { compileAccessPolicy } from '../../src/policy/access-policy.js';
import { compileDeniedTools } from '../../src/policy/denied-tools.js';
import { compileHiddenReason } from '../../src/policy/hidden-reason.js';
import { compileToolFilter } from '../../src/policy/tool-filter.js';

const filters = new Map([
  ['docs', compileToolFilter({ enabledTools: [], disabledTools: ['write'] })],
  ['docs_v2', compileToolFilter({ enabledTools: ['read'], disabledTools: [] })],
]);
const options = { filters, disabled: new Set(['plug.off']), policyAllows: compileDeniedTools(['*__delete_*']) };
const aggregate = compileHiddenReason({ ...options, separator: '__' });

describe('compileHiddenReason', () => {
  it.each([
    ['tool', 'docs__write', { reason: 'filtered', server: 'docs' }],
    ['tool', 'docs__delete_all', { reason: 'denied', server: 'docs' }],
    ['tool', 'docs__read', undefined],
    ['tool', 'docs_v2__write', { reason: 'filtered', server: 'docs_v2' }],
    ['tool', 'docs_v2__read', undefined],
    ['tool', 'plug.off__anything', { reason: 'disabled', server: 'plug.off' }],
    ['prompt', 'plug.off__greeting', { reason: 'disabled', server: 'plug.off' }],
    ['prompt', 'docs__write', undefined],
    ['tool', 'nobody__write', undefined],
    ['tool', 'docs__', undefined],
  ] as const)('%s %s → %o', (kind, name, expected) => {
    expect(aggregate(kind, name)).toEqual(expected);
  });

  it('reads a side channel’s unprefixed names as its one server’s', () => {
    const side = compileHiddenReason({ ...options, separator: null, server: 'docs' });
    expect(side('tool', 'write')).toEqual({ reason: 'filtered', server: 'docs' });
    expect(side('tool', 'read')).toBeUndefined();
  });

  it('names the access rule that hid a tool or a server’s prompts from this caller, and only this caller', () => {
    const access = compileAccessPolicy({
      default: 'deny',
      rules: [
        { name: 'eng-no-docs-admin', principals: ['eng-*'], effect: 'deny', tools: ['docs__admin*'] },
        { principals: ['eng-*'], effect: 'allow' },
      ],
    });
    const eng = access.profileFor({ principal: 'eng-alice' });
    const visitor = access.profileFor({ principal: 'visitor' });
    expect(aggregate('tool', 'docs__admin_reset', eng)).toEqual({ reason: 'denied', server: 'docs', rule: 'eng-no-docs-admin' });
    expect(aggregate('tool', 'docs__read', eng)).toBeUndefined();
    expect(aggregate('prompt', 'docs__greeting', eng)).toBeUndefined();
    expect(aggregate('tool', 'docs__read', visitor)).toEqual({ reason: 'denied', server: 'docs', rule: 'default' });
    expect(aggregate('prompt', 'docs__greeting', visitor)).toEqual({ reason: 'denied', server: 'docs', rule: 'default' });
    // The server's own filter and the deniedTools glob hide it for everyone: no rule is named.
    expect(aggregate('tool', 'docs__write', visitor)).toEqual({ reason: 'filtered', server: 'docs' });
    expect(aggregate('tool', 'docs__delete_all', visitor)).toEqual({ reason: 'denied', server: 'docs' });
    expect(aggregate('tool', 'nobody__read', visitor)).toBeUndefined();
  });

  it('cannot split names when namespacing is off on the aggregate', () => {
    expect(compileHiddenReason({ ...options, separator: null })('tool', 'write')).toBeUndefined();
  });
});
