import { UriTemplate } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';

import { compileUriTemplate, routeResourceUri, type TemplateRoute } from '../../src/catalogue/build-index.js';

/** Deterministic PRNG (mulberry32) so the differential cases are the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sdkMatches = (template: string, uri: string): boolean => new UriTemplate(template).match(uri) !== null;

const TEMPLATES = [
  'file:///{path}',
  'file:///{+path}',
  'file:///{+path}.txt',
  'db://{schema}.{table}.{column}',
  'github://{owner}/{repo}',
  'github://{owner}/{repo}/blob/{+path}',
  'x{/segments*}',
  'x{/segment}',
  'x{list*}y',
  'x{a,b}y',
  'name{.ext}',
  'search{?q}',
  'search{?q,lang}',
  'search{?q}{&page}',
  'page{#section}',
  'lit(a)+[b].c{v}',
  'a}b{v}',
  '{a}{b}',
  '{+a}{+b}',
  'é{v}ü',
  'plain://no/expressions',
];

const ALPHABET = ['a', 'b', 'x', 'y', '/', ',', '.', '&', '=', '?', '#', '\n', ':', 'é', '😀', 'q', 'txt'];

function candidateUris(template: string, random: () => number): string[] {
  const sdk = new UriTemplate(template);
  const values = [
    'v',
    'a/b',
    'a,b',
    'a.b',
    'x y',
    '',
    'é',
  ];
  const uris = new Set<string>();
  for (const value of values) {
    const vars = Object.fromEntries(sdk.variableNames.map((n) => [n, value]));
    uris.add(sdk.expand(vars));
    uris.add(sdk.expand(Object.fromEntries(sdk.variableNames.map((n) => [n, [value, 'z']]))));
  }
  const literalish = template.replace(/\{[^}]*\}/g, 'v');
  uris.add(literalish);
  for (let i = 0; i < 200; i += 1) {
    const base = [...uris][Math.floor(random() * uris.size)] as string;
    const pos = Math.floor(random() * (base.length + 1));
    const piece = ALPHABET[Math.floor(random() * ALPHABET.length)] as string;
    const mutated =
      random() < 0.5 ? base.slice(0, pos) + piece + base.slice(pos) : base.slice(0, pos) + base.slice(pos + 1);
    uris.add(mutated);
  }
  for (let i = 0; i < 100; i += 1) {
    const length = Math.floor(random() * 12);
    uris.add(Array.from({ length }, () => ALPHABET[Math.floor(random() * ALPHABET.length)]).join(''));
  }
  return [...uris];
}

describe('compileUriTemplate', () => {
  it.each(TEMPLATES)('accepts exactly the URIs the SDK matches for %j', (template) => {
    const matcher = compileUriTemplate(template);
    const uris = candidateUris(template, prng(template.length * 7919 + 17));
    const disagreements = uris.filter((uri) => matcher.test(uri) !== sdkMatches(template, uri));
    expect(disagreements).toEqual([]);
    expect(uris.some((uri) => matcher.test(uri))).toBe(true);
  });

  it('agrees with the SDK on generated templates and URIs', () => {
    const random = prng(42);
    const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const literals = ['a', 'x/', '.', ',', '&', '?', '=', 'é', '(', '*', '}', '://'];
    const expressions = ['{v}', '{+v}', '{#v}', '{.v}', '{/v}', '{/v*}', '{v*}', '{?v}', '{?v,w}', '{&v}', '{v,w}'];
    let compared = 0;
    for (let t = 0; t < 300; t += 1) {
      const length = 1 + Math.floor(random() * 4);
      const template = Array.from({ length }, () => (random() < 0.5 ? pick(literals) : pick(expressions))).join('');
      const matcher = compileUriTemplate(template);
      for (const uri of candidateUris(template, random).slice(0, 60)) {
        expect(matcher.test(uri), `${template} ${JSON.stringify(uri)}`).toBe(sdkMatches(template, uri));
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(10_000);
  });

  it.each([
    ['db://{schema}.{table}.{column}', 'db://public.users.email', true],
    ['db://{schema}.{table}.{column}', 'db://public.users', false],
    ['file:///{path}', 'file:///a/b', false],
    ['file:///{+path}', 'file:///a/b', true],
    ['file:///{+path}', 'file:///a\nb', false],
    ['search{?q,lang}', 'search?q=x&lang=en', true],
    ['search{?q,lang}', 'search?q=x', false],
    ['x{/segments*}', 'x/a,b', true],
    ['x{/segments*}', 'x/a,,b', false],
    ['x{/segments*}', 'x/a,', false],
    ['lit(a)+[b].c{v}', 'lit(a)+[b].cV', true],
    ['lit(a)+[b].c{v}', 'lit(a)+[b]xcV', false],
  ])('matches %j against %j: %s', (template, uri, expected) => {
    expect(compileUriTemplate(template).test(uri)).toBe(expected);
    expect(sdkMatches(template, uri)).toBe(expected);
  });

  it('finishes on a long hostile URI where a backtracking RegExp would stall', () => {
    const matcher = compileUriTemplate('db://{schema}.{table}.{column}');
    expect(matcher.test(`db://${'.'.repeat(200_000)}/`)).toBe(false);
    expect(compileUriTemplate('x{+a}{+b}{+c}y').test(`x${'a'.repeat(200_000)}`)).toBe(false);
  });

  it('matches no URI longer than the SDK accepts', () => {
    expect(compileUriTemplate('{+x}').test('a'.repeat(1_000_001))).toBe(false);
    expect(compileUriTemplate('{+x}').test('a'.repeat(1_000))).toBe(true);
  });

  it.each(['broken://{unclosed', '{}', 'x{?}y', 'x{+}'])('refuses %j, which the SDK cannot parse or match', (template) => {
    expect(() => compileUriTemplate(template)).toThrow(TypeError);
  });
});

describe('routeResourceUri', () => {
  const route = (server: string, uriTemplate: string): TemplateRoute => ({
    server,
    uriTemplate,
    matcher: compileUriTemplate(uriTemplate),
  });
  const routes = [route('files', 'file:///{+path}'), route('gh', 'github://{owner}/{repo}'), route('any', '{+all}')];
  const index = new Map([['file:///etc/motd', 'exact']]);

  it.each([
    ['file:///etc/motd', 'exact'],
    ['file:///tmp/x', 'files'],
    ['github://a/b', 'gh'],
    ['github://a/b/c', 'any'],
    ['mem://x', 'any'],
  ])('routes %j to %j', (uri, server) => {
    expect(routeResourceUri(uri, index, routes)).toBe(server);
  });

  it('returns undefined when nothing owns the URI', () => {
    expect(routeResourceUri('mem://x', index, routes.slice(0, 2))).toBeUndefined();
    expect(routeResourceUri('mem://x', new Map(), [])).toBeUndefined();
  });
});
