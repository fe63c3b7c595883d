/**
 * The tool surface on merged catalogues built by the real merge (no I/O): config semantics from
 * the parsed config (three-valued per-server `defer` against the global setting and the session
 * option), pins and hints, pass-through of tool `_meta`, per-view loaded sets, the loaded bound,
 * and pages.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { LoadedTools } from '../../../src/catalogue/surface/loaded-tools.js';
import { pageOf } from '../../../src/catalogue/surface/list-page.js';
import { compileToolSurfaceOptions } from '../../../src/catalogue/surface/surface-options.js';
import { ToolSurface, type SessionTools, type SurfaceCall } from '../../../src/catalogue/surface/tool-surface.js';
import { mergeTools } from '../../../src/catalogue/merge.js';
import { memoryLoadedNames } from '../../../src/naming/loaded-names.js';

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({ name, description: `does ${name.replace(/_/g, ' ')}`, inputSchema: { type: 'object' }, ...extra });

/** Server "pinned" (5 tools, the `defer` under test) and "other" (6 tools, no `defer`): 11 visible tools. */
const parts = [
  { server: 'pinned', tools: ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => tool(`make_${n}`)) },
  { server: 'other', tools: ['b1', 'b2', 'b3', 'b4', 'b5', 'b6'].map((n) => tool(`list_${n}`)) },
];
const merged = mergeTools(parts, { separator: '__', filter: () => true });
const legacy: SurfaceCall = { era: '2025', meta: undefined };

function surfaceFor(catalogue: Record<string, unknown>, servers: Record<string, Record<string, unknown>> = {}) {
  const config = parseConfig({
    catalogue,
    servers: Object.fromEntries(['pinned', 'other'].map((name) => [name, { command: 'node', ...servers[name] }])),
  });
  return new ToolSurface(compileToolSurfaceOptions(config), { servers: ['pinned', 'other'], instructionsOf: () => undefined });
}

function session(max = 64, deferTools?: boolean): SessionTools & { announced: number } {
  const state = { deferTools, loaded: new LoadedTools(max), announced: 0, announce: () => (state.announced += 1) };
  return state;
}

const namesOf = (result: Record<string, unknown>) => (result.tools as Tool[]).map((t) => t.name);
const deferredServers = (result: Record<string, unknown>) => {
  const shown = new Set(namesOf(result));
  return ['pinned', 'other'].filter((server) => !shown.has(`${server}__${server === 'pinned' ? 'make_a1' : 'list_b1'}`));
};

describe('deferral as configured, through the parsed config', () => {
  // global, pinned server's `defer` as written in the config (null = absent), session option → deferred servers
  const TABLE: Array<[unknown, boolean | null | undefined, boolean | undefined, string[]]> = [
    [false, undefined, undefined, []],
    [false, null, undefined, []],
    [false, true, undefined, ['pinned']],
    [false, false, true, ['other']],
    [false, undefined, true, ['pinned', 'other']],
    [true, undefined, undefined, ['pinned', 'other']],
    [true, false, undefined, ['other']],
    [true, true, false, ['pinned']],
    [true, null, false, []],
    [{ above: 10 }, undefined, undefined, ['pinned', 'other']],
    [{ above: 11 }, undefined, undefined, []],
    [{ above: 11 }, true, undefined, ['pinned']],
    [{ above: 10 }, false, undefined, ['other']],
  ];
  it.each(TABLE)('global %j, server defer %j, session %j → defers %j', async (global, defer, option, expected) => {
    const surface = surfaceFor({ deferTools: global }, { pinned: defer === undefined ? {} : { defer } });
    const { result } = await surface.view(session(64, option)).list(merged, {}, legacy);
    expect(deferredServers(result)).toEqual(expected);
    expect(namesOf(result).includes('search_tools')).toBe(expected.length > 0);
  });

  it('leaves at most the two meta-tools when everything is deferred', async () => {
    expect(namesOf((await surfaceFor({ deferTools: true }).view(session()).list(merged, {}, legacy)).result)).toEqual(['search_tools', 'call_tool']);
  });
});

describe('pins and hints', () => {
  it('lists an alwaysLoad tool directly with anthropic/alwaysLoad, even when its server is deferred', async () => {
    const surface = surfaceFor({ deferTools: true }, { pinned: { alwaysLoad: ['make_a2'] }, other: { alwaysLoad: true } });
    const tools = (await surface.view(session()).list(merged, {}, legacy)).result.tools as Tool[];
    // The meta-tools first, then the visible tools in the catalogue's (deterministic) order.
    const shown = new Set(['pinned__make_a2', ...parts[1]!.tools.map((t) => `other__${t.name}`)]);
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool', ...merged.tools.map((t) => t.name).filter((name) => shown.has(name))]);
    expect(tools).toHaveLength(2 + shown.size);
    expect(tools.slice(2).every((t) => t._meta?.['anthropic/alwaysLoad'] === true)).toBe(true);
  });

  it('passes an upstream tool\'s own _meta through intact', async () => {
    const hinted = mergeTools([{ server: 'pinned', tools: [tool('x', { _meta: { 'anthropic/searchHint': 'spreadsheets', other: { deep: 1 } } })] }], {
      separator: '__',
      filter: () => true,
    });
    const [listed] = (await surfaceFor({ deferTools: false }, { pinned: { alwaysLoad: true } }).view(session()).list(hinted, {}, legacy)).result.tools as Tool[];
    expect(listed?._meta).toEqual({ 'anthropic/searchHint': 'spreadsheets', other: { deep: 1 }, 'anthropic/alwaysLoad': true });
  });
});

describe('loaded tools', () => {
  it('belong to the view that loaded them, never to another view of the same surface', async () => {
    const surface = surfaceFor({ deferTools: true, maxLoadedTools: 4 });
    const a = session(4);
    const b = session(4);
    const viewA = surface.view(a);
    const viewB = surface.view(b);
    const stateless = surface.view();
    const result = (await viewA.callMeta(merged, { name: 'search_tools', arguments: { query: 'make a3', limit: 1, load: true } }, legacy, () => Promise.reject(new Error('no call'))))!;
    expect((result.structuredContent as { loaded: string[] }).loaded).toEqual(['pinned__make_a3']);
    expect(a.announced).toBe(1);
    expect(namesOf((await viewA.list(merged, {}, legacy)).result)).toContain('pinned__make_a3');
    expect(namesOf((await viewB.list(merged, {}, legacy)).result)).toEqual(['search_tools', 'call_tool']);
    expect(namesOf((await stateless.list(merged, {}, { era: '2026', meta: undefined })).result)).toEqual(['search_tools', 'call_tool']);
    expect(b.announced).toBe(0);
  });

  it("of a 2026 caller are kept per principal and workspace, and list for that caller alone", async () => {
    const surface = surfaceFor({ deferTools: true, maxLoadedTools: 4 });
    const modern: SurfaceCall = { era: '2026', meta: undefined };
    const alice = surface.callerView('alice', undefined);
    const result = (await alice.callMeta(merged, { name: 'search_tools', arguments: { query: 'list b4', limit: 1, load: true } }, modern, () => Promise.reject(new Error('no call'))))!;
    expect((result.structuredContent as { loaded: string[] }).loaded).toEqual(['other__list_b4']);
    // A later request of the same caller (a new view, as every 2026 request gets) lists it.
    const again = await surface.callerView('alice', undefined).list(merged, {}, modern);
    expect(namesOf(again.result)).toContain('other__list_b4');
    expect(again.callerLoaded).toBe(true);
    for (const [principal, workspace] of [['bob', undefined], ['alice', 'other-repo'], [undefined, undefined]] as const) {
      const other = await surface.callerView(principal, workspace).list(merged, {}, modern);
      expect(namesOf(other.result)).toEqual(['search_tools', 'call_tool']);
      expect(other.callerLoaded).toBe(false);
    }
  });

  it('are bounded, the oldest dropped first', () => {
    const loaded = new LoadedTools(3);
    expect(loaded.load(['a', 'b'])).toEqual({ loaded: ['a', 'b'], dropped: [] });
    expect(loaded.load(['b', 'c', 'd'])).toEqual({ loaded: ['c', 'd'], dropped: ['a'] });
    expect(loaded.load(['e', 'f', 'g', 'h'])).toEqual({ loaded: ['f', 'g', 'h'], dropped: ['b', 'c', 'd'] });
    expect(loaded.size).toBe(3);
    expect(() => new LoadedTools(0)).toThrow(TypeError);
  });

  it('of 2026 callers are bounded per caller, and in callers and bytes overall', async () => {
    const store = memoryLoadedNames({ maxKeys: 2, maxBytes: 4_096 });
    expect(await store.load('k1', ['a', 'b'], 3)).toEqual({ loaded: ['a', 'b'], dropped: [] });
    expect(await store.load('k1', ['b', 'c', 'd'], 3)).toEqual({ loaded: ['c', 'd'], dropped: ['a'] });
    expect(await store.load('k1', ['e', 'f', 'g', 'h'], 3)).toEqual({ loaded: ['f', 'g', 'h'], dropped: ['b', 'c', 'd'] });
    expect(await store.names('k1')).toEqual(['f', 'g', 'h']);
    await store.load('k2', ['x'], 3);
    await store.load('k3', ['y'], 3);
    expect(await store.names('k1')).toEqual([]);
    await store.load('k4', ['z'.repeat(64)], 100);
    for (let i = 0; i < 100; i += 1) await store.load('k4', [`${i}`.padEnd(64, 'n')], 100);
    expect((await store.names('k4')).join('').length * 2).toBeLessThanOrEqual(4_096);
  });
});

describe('pages', () => {
  const items = Array.from({ length: 25 }, (_, i) => `t${i}`);
  const print = () => 'ABCDEFGHIJKLMNOP';

  it('walks a list through nextCursor and back to the end', () => {
    const seen: string[] = [];
    let cursor: unknown;
    do {
      const page = pageOf(items, print, 10, cursor);
      seen.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen).toEqual(items);
  });

  it('refuses a cursor of another list, a forged offset and garbage with -32602', () => {
    const { nextCursor } = pageOf(items, print, 10, undefined);
    expect(() => pageOf(items, () => 'QRSTUVWXYZABCDEF', 10, nextCursor)).toThrow(/changed/);
    for (const bad of ['0.ABCDEFGHIJKLMNOP', 'zz.ABCDEFGHIJKLMNOP', 'nope', 42, 'a'.repeat(500)]) {
      expect(() => pageOf(items, print, 10, bad)).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }));
    }
  });

  it('answers one page, and refuses any cursor, when no page size is set', () => {
    expect(pageOf(items, print, undefined, undefined)).toEqual({ items, nextCursor: undefined });
    expect(() => pageOf(items, print, undefined, '1.ABCDEFGHIJKLMNOP')).toThrow(/does not paginate/);
  });
});

describe('index rebuilds', () => {
  const search = (surface: ToolSurface, snapshot: typeof merged, query: string) =>
    surface.view(session()).callMeta(snapshot, { name: 'search_tools', arguments: { query, limit: 1 } }, legacy, () => Promise.reject(new Error('no call')));
  const topName = async (result: Promise<Record<string, unknown>> | undefined) => ((await result)!.structuredContent as { tools: Tool[] }).tools[0]?.name;
  const remerge = (changed: typeof parts) => mergeTools(changed, { separator: '__', filter: () => true });
  const segmentOf = (surface: ToolSurface, snapshot: typeof merged, server: string) => surface.searchIndex(snapshot).segments.find((s) => s.server === server);

  it("re-tokenises only the server whose list changed, and leaves the other servers' postings as they were", async () => {
    const surface = surfaceFor({ deferTools: true });
    expect(await topName(search(surface, merged, 'list b2'))).toBe('other__list_b2');
    expect(surface.segments.builds).toBe(2);
    const before = { pinned: segmentOf(surface, merged, 'pinned'), other: segmentOf(surface, merged, 'other') };

    // `pinned` announced a change: one tool renamed, one description rewritten.
    const changed = remerge([{ server: 'pinned', tools: [tool('make_a1'), tool('forge_a2'), tool('make_a3', { description: 'smelt ore into bars' }), tool('make_a4'), tool('make_a5')] }, parts[1]!]);
    expect(await topName(search(surface, changed, 'smelt ore'))).toBe('pinned__make_a3');
    expect(await topName(search(surface, changed, 'list b2'))).toBe('other__list_b2');
    expect(surface.segments.builds).toBe(3);
    expect(segmentOf(surface, changed, 'other')).toBe(before.other);
    expect(segmentOf(surface, changed, 'pinned')).not.toBe(before.pinned);
  });

  it('tokenises nothing when a server is listed again with the same definitions (ttlMs: 0)', async () => {
    const surface = surfaceFor({ deferTools: true });
    await search(surface, merged, 'make a1');
    for (let i = 0; i < 3; i += 1) {
      const relisted = remerge(JSON.parse(JSON.stringify(parts)) as typeof parts);
      expect(await topName(search(surface, relisted, 'list b4'))).toBe('other__list_b4');
    }
    expect(surface.segments.builds).toBe(2);
  });

  it('shares the postings of identical definitions between sessions, and not of different ones', async () => {
    const surface = surfaceFor({ deferTools: true });
    // Two sessions' own connections list `other` the same and `pinned` differently (a tool hidden for one).
    const first = remerge(parts);
    const second = mergeTools(parts, { separator: '__', filter: (_server, name) => name !== 'make_a5' });
    await search(surface, first, 'make');
    await search(surface, second, 'make');
    expect(segmentOf(surface, second, 'other')).toBe(segmentOf(surface, first, 'other'));
    expect(segmentOf(surface, second, 'pinned')).not.toBe(segmentOf(surface, first, 'pinned'));
    expect(surface.segments.builds).toBe(3);
    expect(await topName(search(surface, second, 'make a5'))).not.toBe('pinned__make_a5');
  });
});

describe('shown: per server, what tools/list lists and what it leaves to search', () => {
  /** Each server's split, checked against what `list` itself lists. */
  const check = async (view: ReturnType<ToolSurface['view']>, call: SurfaceCall) => {
    const listed = new Set(namesOf((await view.list(merged, {}, call)).result));
    const split = view.shown(merged);
    for (const server of ['pinned', 'other']) {
      const own = merged.tools.filter((t) => merged.index.get(t.name)?.server === server).map((t) => t.name);
      expect(split.get(server)).toEqual({ listed: own.filter((n) => listed.has(n)).length, deferred: own.filter((n) => !listed.has(n)).length });
    }
    return split;
  };

  it('agrees with list for every deferral setting, pins and a session’s loaded tools', async () => {
    expect((await check(surfaceFor({ deferTools: false }).view(), { era: '2026', meta: undefined })).get('pinned')).toEqual({ listed: 5, deferred: 0 });
    const above = surfaceFor({ deferTools: { above: 10 } }, { pinned: { alwaysLoad: ['make_a2'] } });
    expect(await check(above.view(), { era: '2026', meta: undefined })).toEqual(new Map([['pinned', { listed: 1, deferred: 4 }], ['other', { listed: 0, deferred: 6 }]]));
    const own = session();
    own.loaded.load(['other__list_b3']);
    const withLoaded = surfaceFor({ deferTools: true });
    expect((await check(withLoaded.view(own), legacy)).get('other')).toEqual({ listed: 1, deferred: 5 });
  });
});
