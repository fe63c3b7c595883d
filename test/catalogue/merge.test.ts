import type { Prompt, Resource, ResourceTemplateType, ServerCapabilities, Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';

import { nameHash } from '../../src/naming/names.js';
import { compileToolFilter } from '../../src/policy/tool-filter.js';
import {
  mergeCapabilities,
  mergeInstructions,
  mergePrompts,
  mergeResources,
  mergeResourceTemplates,
  mergeTools,
  type VisibilityFilter,
} from '../../src/catalogue/merge.js';
import { routeResourceUri } from '../../src/catalogue/build-index.js';

const all: VisibilityFilter = () => true;

function tool(name: string, extra: Partial<Tool> = {}): Tool {
  return { name, inputSchema: { type: 'object' }, ...extra };
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

describe('mergeTools', () => {
  it('lists the same set of tools in the same order whatever order upstreams answer and list in', () => {
    const a = { server: 'alpha', tools: [tool('zeta'), tool('beta'), tool('mid')] };
    const b = { server: 'beta', tools: [tool('one'), tool('two')] };
    const shuffledA = { server: 'alpha', tools: [tool('mid'), tool('zeta'), tool('beta')] };
    const shuffledB = { server: 'beta', tools: [tool('two'), tool('one')] };
    const names = (parts: Parameters<typeof mergeTools>[0], separator: string | null) =>
      mergeTools(parts, { separator, filter: all }).tools.map((t) => t.name);
    expect(names([a, b], '__')).toEqual(['alpha__beta', 'alpha__mid', 'alpha__zeta', 'beta__one', 'beta__two']);
    expect(names([shuffledB, shuffledA], '__')).toEqual(names([a, b], '__'));
    expect(names([shuffledA, shuffledB], null)).toEqual(['beta', 'mid', 'one', 'two', 'zeta']);
    expect(names([b, a], null)).toEqual(names([shuffledA, shuffledB], null));
  });

  it('renames each tool to its exposed name and keeps every other field', () => {
    const read = tool('read', {
      title: 'Read a file',
      description: 'Reads',
      annotations: { readOnlyHint: true },
      _meta: { k: 'v' },
      outputSchema: { type: 'object' },
    });
    const { tools, index } = mergeTools([{ server: 'files', tools: [read] }], { separator: '__', filter: all });
    expect(tools).toEqual([{ ...read, name: 'files__read' }]);
    expect(index).toEqual(new Map([['files__read', { server: 'files', name: 'read' }]]));
    expect(read.name).toBe('read');
  });

  it('does not invent a title for a tool without one', () => {
    const { tools } = mergeTools([{ server: 'files', tools: [tool('read')] }], { separator: '__', filter: all });
    expect(tools[0]).not.toHaveProperty('title');
  });

  it('lists tools by exposed name, not in the order servers or their tools came', () => {
    const { tools } = mergeTools(
      [
        { server: 'zeta', tools: [tool('b'), tool('a')] },
        { server: 'alpha', tools: [tool('c')] },
      ],
      { separator: '__', filter: all },
    );
    expect(tools.map((t) => t.name)).toEqual(['alpha__c', 'zeta__a', 'zeta__b']);
  });

  it('exposes names unprefixed with separator null and resolves the collision deterministically', () => {
    const { tools, index, collisions } = mergeTools(
      [
        { server: 'web', tools: [tool('search')] },
        { server: 'docs', tools: [tool('search'), tool('fetch')] },
      ],
      { separator: null, filter: all },
    );
    const renamed = `search_${nameHash('web\u0000search')}`;
    expect(tools.map((t) => t.name)).toEqual(['fetch', 'search', renamed]);
    expect(index.get('search')).toEqual({ server: 'docs', name: 'search' });
    expect(index.get(renamed)).toEqual({ server: 'web', name: 'search' });
    expect(collisions).toHaveLength(1);
  });

  it('applies the per-server filter on original names and a policy glob on exposed names', () => {
    const perServer = new Map([
      ['files', compileToolFilter({ enabledTools: [], disabledTools: ['write'] })],
      ['shell', compileToolFilter({ enabledTools: ['exec', 'ls'], disabledTools: [] })],
    ]);
    const policy = compileToolFilter({ enabledTools: [], disabledTools: [], deniedGlobs: ['*__exec'] });
    const filter: VisibilityFilter = (server, name, exposed) =>
      (perServer.get(server)?.(name) ?? false) && policy(exposed);

    const { tools, index } = mergeTools(
      [
        { server: 'files', tools: [tool('read'), tool('write')] },
        { server: 'shell', tools: [tool('exec'), tool('ls'), tool('rm')] },
      ],
      { separator: '__', filter },
    );
    expect(tools.map((t) => t.name)).toEqual(['files__read', 'shell__ls']);
    expect([...index.keys()]).toEqual(['files__read', 'shell__ls']);
  });

  it('passes the filter the server, the original name and the exposed name', () => {
    const seen: Array<[string, string, string]> = [];
    mergeTools([{ server: 's', tools: [tool('a b')] }], {
      separator: '.',
      filter: (server, name, exposed) => {
        seen.push([server, name, exposed]);
        return true;
      },
    });
    expect(seen).toEqual([['s', 'a b', 's.a_b']]);
  });

  it('never renames a visible tool because another one is hidden', () => {
    const parts = [
      { server: 'a', tools: [tool('x')] },
      { server: 'b', tools: [tool('x')] },
    ];
    const shown = mergeTools(parts, { separator: null, filter: all });
    const hidingA = mergeTools(parts, { separator: null, filter: (server) => server !== 'a' });
    expect(hidingA.index.size).toBe(1);
    const [exposedB] = [...hidingA.index.keys()];
    expect(shown.index.get(exposedB as string)).toEqual({ server: 'b', name: 'x' });
    expect(hidingA.index.has('x')).toBe(false);
  });

  it('keeps the first copy of a name one server lists twice and reports the repeat', () => {
    const { tools, duplicates } = mergeTools(
      [{ server: 's', tools: [tool('x', { description: 'first' }), tool('x', { description: 'second' })] }],
      { separator: '__', filter: all },
    );
    expect(tools).toEqual([tool('s__x', { description: 'first' })]);
    expect(duplicates).toEqual([{ server: 's', name: 'x' }]);
  });

  it('keeps every exposed name within 64 characters for long server and tool names', () => {
    const server = 'S'.repeat(48);
    const { tools, index } = mergeTools(
      [{ server, tools: [tool('t'.repeat(40)), tool(`${'t'.repeat(40)}2`), tool('ok')] }],
      { separator: '__', filter: all },
    );
    for (const t of tools) expect(t.name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
    expect(index.size).toBe(3);
    expect(new Set(tools.map((t) => t.name)).size).toBe(3);
  });

  it('routes every exposed name to the same tool whatever order the servers are given in', () => {
    const parts = [
      { server: 'a', tools: [tool('x'), tool('y y')] },
      { server: 'b', tools: [tool('x'), tool('y/y')] },
      { server: 'c', tools: [tool('x'), tool('y_y')] },
    ];
    const expected = [...mergeTools(parts, { separator: null, filter: all }).index].sort();
    for (const order of permutations(parts)) {
      expect([...mergeTools(order, { separator: null, filter: all }).index].sort()).toEqual(expected);
    }
    expect(expected).toHaveLength(6);
  });
});

describe('mergePrompts', () => {
  it('namespaces prompts like tools and keeps their other fields', () => {
    const prompt: Prompt = { name: 'review', title: 'Review', arguments: [{ name: 'code', required: true }] };
    const { prompts, index } = mergePrompts(
      [
        { server: 'git', prompts: [prompt] },
        { server: 'docs', prompts: [{ name: 'review' }] },
      ],
      { separator: '__', filter: all },
    );
    expect(prompts).toEqual([
      { ...prompt, name: 'git__review' },
      { name: 'docs__review' },
    ]);
    expect(index.get('docs__review')).toEqual({ server: 'docs', name: 'review' });
  });

  it('hides prompts the filter rejects', () => {
    const { prompts, index } = mergePrompts([{ server: 'git', prompts: [{ name: 'a' }, { name: 'b' }] }], {
      separator: '__',
      filter: (_server, name) => name !== 'b',
    });
    expect(prompts.map((p) => p.name)).toEqual(['git__a']);
    expect(index.has('git__b')).toBe(false);
  });
});

describe('mergeResources', () => {
  const r = (uri: string, name = uri): Resource => ({ uri, name });

  it('keeps URIs as they are and indexes each to its server', () => {
    const { resources, index, collisions } = mergeResources([
      { server: 'files', resources: [r('file:///a'), r('file:///b')] },
      { server: 'docs', resources: [r('https://docs.example/x')] },
    ]);
    expect(resources.map((x) => x.uri)).toEqual(['file:///a', 'file:///b', 'https://docs.example/x']);
    expect(index).toEqual(
      new Map([
        ['file:///a', 'files'],
        ['file:///b', 'files'],
        ['https://docs.example/x', 'docs'],
      ]),
    );
    expect(collisions).toEqual([]);
  });

  it('gives a repeated URI to the first server in order and reports the collision', () => {
    const { resources, index, collisions } = mergeResources([
      { server: 'one', resources: [r('mem://shared', 'from one')] },
      { server: 'two', resources: [r('mem://shared', 'from two'), r('mem://only-two')] },
      { server: 'three', resources: [r('mem://shared', 'from three')] },
    ]);
    expect(resources).toEqual([r('mem://shared', 'from one'), r('mem://only-two')]);
    expect(index.get('mem://shared')).toBe('one');
    expect(collisions).toEqual([
      { uri: 'mem://shared', kept: 'one', dropped: 'two' },
      { uri: 'mem://shared', kept: 'one', dropped: 'three' },
    ]);
  });

  it('keeps one copy of a URI a server lists twice', () => {
    const { resources, collisions } = mergeResources([{ server: 's', resources: [r('a://x'), r('a://x')] }]);
    expect(resources).toHaveLength(1);
    expect(collisions).toEqual([{ uri: 'a://x', kept: 's', dropped: 's' }]);
  });
});

describe('mergeResourceTemplates and routeResourceUri', () => {
  const t = (uriTemplate: string): ResourceTemplateType => ({ uriTemplate, name: uriTemplate });

  const templates = mergeResourceTemplates([
    { server: 'files', resourceTemplates: [t('file:///{+path}')] },
    { server: 'gh', resourceTemplates: [t('github://{owner}/{repo}'), t('broken://{unclosed')] },
    { server: 'wide', resourceTemplates: [t('{+anything}'), t('file:///{+path}')] },
  ]);
  const resources = mergeResources([{ server: 'exact', resources: [{ uri: 'file:///etc/motd', name: 'motd' }] }]);

  it('lists every parseable template once, in order', () => {
    expect(templates.resourceTemplates.map((x) => x.uriTemplate)).toEqual([
      'file:///{+path}',
      'github://{owner}/{repo}',
      '{+anything}',
    ]);
    expect(templates.routes.map((x) => [x.server, x.uriTemplate])).toEqual([
      ['files', 'file:///{+path}'],
      ['gh', 'github://{owner}/{repo}'],
      ['wide', '{+anything}'],
    ]);
  });

  it('leaves out and reports a template the SDK cannot parse', () => {
    expect(templates.rejected).toEqual([{ server: 'gh', uriTemplate: 'broken://{unclosed' }]);
  });

  it('reports a template string listed by a second server', () => {
    expect(templates.collisions).toEqual([{ uri: 'file:///{+path}', kept: 'files', dropped: 'wide' }]);
  });

  it.each([
    ['file:///etc/motd', 'exact'],
    ['file:///home/user/notes.txt', 'files'],
    ['github://octo/repo', 'gh'],
    ['github://octo/repo/extra', 'wide'],
    ['custom://anything', 'wide'],
  ])('routes %j to %j (exact index first, then the first matching template)', (uri, server) => {
    expect(routeResourceUri(uri, resources.index, templates.routes)).toBe(server);
  });

  it('returns undefined when neither the index nor any template matches', () => {
    const narrow = mergeResourceTemplates([{ server: 'gh', resourceTemplates: [t('github://{owner}/{repo}')] }]);
    expect(routeResourceUri('file:///x', resources.index, narrow.routes)).toBeUndefined();
    expect(routeResourceUri('github://only-owner', new Map(), narrow.routes)).toBeUndefined();
  });

  it('treats a URI the SDK refuses to match (over its length limit) as matching nothing', () => {
    const narrow = mergeResourceTemplates([{ server: 'gh', resourceTemplates: [t('{+x}')] }]);
    expect(routeResourceUri('a'.repeat(1_000_001), new Map(), narrow.routes)).toBeUndefined();
  });
});

describe('mergeCapabilities', () => {
  const cases: Array<[what: string, parts: Array<ServerCapabilities | undefined>, expected: ServerCapabilities]> = [
    ['nothing from nobody', [], {}],
    ['nothing from upstreams without capabilities', [undefined, {}], {}],
    ['tools from any upstream', [{}, { tools: {} }], { tools: {} }],
    [
      'listChanged OR-ed',
      [{ tools: { listChanged: false } }, { tools: { listChanged: true } }, { tools: {} }],
      { tools: { listChanged: true } },
    ],
    ['listChanged false when every upstream says false', [{ prompts: { listChanged: false } }], { prompts: { listChanged: false } }],
    [
      'resources subscribe and listChanged OR-ed independently',
      [{ resources: { subscribe: true } }, { resources: { listChanged: true, subscribe: false } }],
      { resources: { subscribe: true, listChanged: true } },
    ],
    ['logging and completions present if any has them', [{ logging: {} }, { completions: {} }], { logging: {}, completions: {} }],
    [
      'experimental merged by key, first wins',
      [{ experimental: { a: { v: 1 } } }, { experimental: { a: { v: 2 }, b: { v: 3 } } }],
      { experimental: { a: { v: 1 }, b: { v: 3 } } },
    ],
    [
      'tasks and extensions left out',
      [{ tasks: { list: {} }, extensions: { 'io.x/y': {} }, tools: {} }],
      { tools: {} },
    ],
    [
      'the full union',
      [
        { tools: { listChanged: true }, logging: {} },
        { prompts: {}, resources: { subscribe: true } },
        { completions: {}, resources: { listChanged: false } },
      ],
      {
        tools: { listChanged: true },
        logging: {},
        prompts: {},
        resources: { subscribe: true, listChanged: false },
        completions: {},
      },
    ],
  ];

  it.each(cases)('unions capabilities: %s', (_what, parts, expected) => {
    const merged = mergeCapabilities(parts.map((capabilities, i) => ({ server: `s${i}`, capabilities })));
    expect(merged).toEqual(expected);
  });

  it('does not modify the upstream capability objects', () => {
    const first: ServerCapabilities = { tools: { listChanged: false }, experimental: { a: {} } };
    const before = structuredClone(first);
    mergeCapabilities([
      { server: 'a', capabilities: first },
      { server: 'b', capabilities: { tools: { listChanged: true }, experimental: { b: {} } } },
    ]);
    expect(first).toEqual(before);
  });
});

describe('mergeInstructions', () => {
  it.each([
    ['nothing at all', undefined, [], undefined],
    ['only blank texts', '  ', [{ server: 'a', instructions: '\n' }, { server: 'b' }], undefined],
    ['only the gateway text', 'Be careful.', [{ server: 'a' }], 'Be careful.'],
    ['only an upstream', undefined, [{ server: 'files', instructions: 'Use paths.' }], '## files\nUse paths.'],
    [
      'gateway first, then upstreams labelled in order',
      'Persona.',
      [
        { server: 'files', instructions: 'Use paths.' },
        { server: 'empty', instructions: '' },
        { server: 'docs', instructions: ' Search first. \n' },
      ],
      'Persona.\n\n## files\nUse paths.\n\n## docs\nSearch first.',
    ],
  ])('combines instructions: %s', (_what, gateway, parts, expected) => {
    expect(mergeInstructions(gateway, parts)).toBe(expected);
  });
});
