/**
 * The pure `ui://` plan of MCP Apps through a merging gateway: which URIs are rewritten, into
 * what, and where an exposed URI routes back to — including an upstream that already uses the
 * URI a rewrite would pick, and the deprecated flat `_meta["ui/resourceUri"]`.
 */
import { describe, expect, it } from 'vitest';
import { exposeReadResult, exposeResource, exposeUiMeta, mergeUiExtension, narrowedPlan, planUiUris, uiUrisOfMeta } from '../../src/catalogue/ui-uris.js';

const tool = (uri: string) => ({ name: 't', inputSchema: {}, _meta: { ui: { resourceUri: uri, visibility: ['app'] } } });

describe('planUiUris', () => {
  it('keeps a shared URI for the first server and rewrites it for each later one', () => {
    const plan = planUiUris([
      { server: 'a', tools: [tool('ui://dash')], resources: [] },
      { server: 'b', tools: [], resources: [{ uri: 'ui://dash' }] },
      { server: 'c', tools: [tool('ui://dash')], resources: [{ uri: 'ui://dash' }] },
    ]);
    expect([plan.exposed('a', 'ui://dash'), plan.exposed('b', 'ui://dash'), plan.exposed('c', 'ui://dash')]).toEqual(['ui://dash', 'ui://b/dash', 'ui://c/dash']);
    expect(plan.target('ui://dash')).toEqual({ server: 'a', uri: 'ui://dash' });
    expect(plan.target('ui://c/dash')).toEqual({ server: 'c', uri: 'ui://dash' });
    expect(plan.empty).toBe(false);
  });

  it('gives a caller no owner for a server its access profile hides, while exposing URIs as for everyone', () => {
    const plan = planUiUris([
      { server: 'a', tools: [], resources: [{ uri: 'ui://dash' }] },
      { server: 'hidden', tools: [tool('ui://dash'), tool('ui://own')], resources: [] },
    ]);
    const narrowed = narrowedPlan(plan, (server) => server !== 'hidden');
    expect(narrowed.exposed('hidden', 'ui://dash')).toBe(plan.exposed('hidden', 'ui://dash'));
    expect(narrowed.target('ui://dash')).toEqual({ server: 'a', uri: 'ui://dash' });
    expect(plan.target('ui://hidden/dash')).toEqual({ server: 'hidden', uri: 'ui://dash' });
    expect(narrowed.target('ui://hidden/dash')).toBeUndefined();
    expect(narrowed.target('ui://own')).toBeUndefined();
    expect(narrowedPlan(plan, undefined)).toBe(plan);
  });

  it('never picks a URI another server already uses', () => {
    const plan = planUiUris([
      { server: 'a', tools: [], resources: [{ uri: 'ui://dash' }] },
      { server: 'evil', tools: [tool('ui://b/dash')], resources: [] },
      { server: 'b', tools: [], resources: [{ uri: 'ui://dash' }] },
    ]);
    expect(plan.exposed('b', 'ui://dash')).toBe('ui://b~2/dash');
    expect(plan.target('ui://b/dash')).toEqual({ server: 'evil', uri: 'ui://b/dash' });
    expect(plan.target('ui://b~2/dash')).toEqual({ server: 'b', uri: 'ui://dash' });
  });

  it('rewrites nothing when no two servers share a URI, and routes only ui:// URIs', () => {
    const plan = planUiUris([
      { server: 'a', tools: [tool('ui://one'), tool('ui://one')], resources: [{ uri: 'ui://one' }, { uri: 'file:///x' }] },
      { server: 'b', tools: [tool('ui://two')], resources: [{ uri: 'file:///x' }] },
    ]);
    expect(plan.empty).toBe(true);
    expect(plan.target('ui://two')).toEqual({ server: 'b', uri: 'ui://two' });
    expect(plan.target('file:///x')).toBeUndefined();
  });
});

describe('exposing', () => {
  const plan = planUiUris([
    { server: 'a', tools: [tool('ui://dash')], resources: [] },
    { server: 'b', tools: [{ name: 'w', _meta: { 'ui/resourceUri': 'ui://dash', other: 1 } }], resources: [] },
  ]);

  it('rewrites _meta.ui.resourceUri and the flat key, keeping every other field', () => {
    expect(exposeUiMeta(tool('ui://dash'), 'b', plan)).toEqual({ name: 't', inputSchema: {}, _meta: { ui: { resourceUri: 'ui://b/dash', visibility: ['app'] } } });
    expect(exposeUiMeta({ _meta: { 'ui/resourceUri': 'ui://dash', other: 1 } }, 'b', plan)).toEqual({ _meta: { 'ui/resourceUri': 'ui://b/dash', other: 1 } });
    const untouched = tool('ui://dash');
    expect(exposeUiMeta(untouched, 'a', plan)).toBe(untouched);
    expect(uiUrisOfMeta({ _meta: { ui: { resourceUri: 'https://x' } } })).toEqual([]);
  });

  it('rewrites a listed resource and the contents of a read back to the exposed URI', () => {
    expect(exposeResource({ uri: 'ui://dash', name: 'd' }, 'b', plan)).toEqual({ uri: 'ui://b/dash', name: 'd' });
    expect(exposeReadResult({ contents: [{ uri: 'ui://dash', text: 'x' }, { uri: 'ui://other' }] }, 'ui://dash', 'ui://b/dash')).toEqual({
      contents: [{ uri: 'ui://b/dash', text: 'x' }, { uri: 'ui://other' }],
    });
  });
});

describe('mergeUiExtension', () => {
  it('is absent unless some upstream advertises it, and joins mimeTypes', () => {
    expect(mergeUiExtension([undefined, undefined])).toBeUndefined();
    expect(mergeUiExtension([{ mimeTypes: ['a'] }, undefined, { mimeTypes: ['b', 'a'], x: 1 }])).toEqual({ mimeTypes: ['a', 'b'] });
  });
});
