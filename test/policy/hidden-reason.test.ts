/** `compileHiddenReason`: why a called name is not in the catalogue, for the audit log's decision. */
import { describe, expect, it } from 'vitest';
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

  it('cannot split names when namespacing is off on the aggregate', () => {
    expect(compileHiddenReason({ ...options, separator: null })('tool', 'write')).toBeUndefined();
  });
});
