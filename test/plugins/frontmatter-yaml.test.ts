import { mkdtemp, rm, writeFile, mkdir, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument, stringify, visit } from 'yaml';
import { parseAgentFile } from '../../src/plugins/agent-file.js';
import { readAgentFiles } from '../../src/plugins/agents-dir.js';
import { countKeyIndicators, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_KEYS, readFrontmatterYaml } from '../../src/plugins/frontmatter-yaml.js';

const file = (frontmatter: string, body = 'Body.') => `---\n${frontmatter}\n---\n${body}\n`;

/** `count` distinct keys, one per line, after the agent's name. */
function manyKeys(count: number): string {
  const lines = ['name: flood'];
  for (let i = 0; i < count; i++) lines.push(`k${i.toString(36)}: 1`);
  return lines.join('\n');
}

/** Exact number of mapping keys in a document, nested mappings included. */
function exactKeys(yaml: string): number {
  let keys = 0;
  visit(parseDocument(yaml, { uniqueKeys: false }), {
    Map(_key, map) {
      keys += map.items.length;
    },
  });
  return keys;
}

describe('agent frontmatter within bounds', () => {
  it('refuses a 256 KiB frontmatter of ~33,000 distinct keys by its size, before parsing it', () => {
    let yaml = 'name: flood';
    for (let i = 0; yaml.length < 256 * 1024 - 64; i++) yaml += `\nk${i.toString(36)}: 1`;
    expect(parseAgentFile(file(yaml))).toEqual({ ok: false, field: 'frontmatter', message: `is larger than ${MAX_FRONTMATTER_BYTES / 1024} KiB` });
  });

  it('refuses a frontmatter under the size bound with more keys than the key bound', () => {
    const yaml = manyKeys(MAX_FRONTMATTER_KEYS * 4);
    expect(Buffer.byteLength(yaml)).toBeLessThan(MAX_FRONTMATTER_BYTES);
    expect(parseAgentFile(file(yaml))).toEqual({ ok: false, field: 'frontmatter', message: `has more than ${MAX_FRONTMATTER_KEYS} keys` });
  });

  it('counts keys of flow mappings without colons towards the bound', () => {
    const flow = `name: flood\nx: {${Array.from({ length: MAX_FRONTMATTER_KEYS }, (_, i) => `k${i}`).join(', ')}}`;
    expect(parseAgentFile(file(flow))).toMatchObject({ ok: false, message: `has more than ${MAX_FRONTMATTER_KEYS} keys` });
  });

  it('accepts a frontmatter of exactly the key bound', () => {
    expect(parseAgentFile(file(manyKeys(MAX_FRONTMATTER_KEYS - 1)))).toMatchObject({ ok: true, agent: { name: 'flood' } });
  });

  it('does not count colons, commas and braces inside scalars as keys', () => {
    const text = Array.from({ length: 600 }, () => 'a: {b, c}, d').join(' ');
    expect(countKeyIndicators(`name: a\ndescription: "${text}"\nmodel: 'x: {y, z}'`)).toBe(3);
  });

  it.each([
    ['the last of many keys repeating the first', `${manyKeys(400)}\nk0: 2`],
    ['a nested mapping repeating a key', 'name: a\nx:\n  b: 1\n  c: 2\n  b: 3'],
    ['a flow mapping repeating a key', 'name: a\nx: {b: 1, b: 2}'],
    ['a number and a string that become the same property', 'name: a\n1: x\n"1": y'],
    ['a null key and an empty string key', 'name: a\n? \n: x\n"": y'],
    ['a boolean and its spelling', 'name: a\ntrue: 1\n"true": 2'],
  ])('refuses %s as a duplicate key', (_label, yaml) => {
    expect(parseAgentFile(file(yaml))).toEqual({ ok: false, field: 'frontmatter', message: 'declares a key twice' });
  });

  it.each([
    ['a mapping as a key', 'name: a\n? {b: 1}\n: x'],
    ['a list as a key', 'name: a\n? [b]\n: x'],
    ['an alias as a key', 'name: a\nk: &n b\n*n : x'],
  ])('refuses %s', (_label, yaml) => {
    expect(parseAgentFile(file(yaml))).toMatchObject({ ok: false, field: 'frontmatter', message: expect.stringContaining('not a plain value') });
  });

  it('keeps the other rules: unknown tags and alias bombs refused, a plain file read', () => {
    expect(readFrontmatterYaml('name: a\nx: !!js/function "f"')).toMatchObject({ ok: false });
    const bomb = ['name: a', 'x0: &a0 [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) bomb.push(`x${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(', ')}]`);
    expect(readFrontmatterYaml(bomb.join('\n'))).toEqual({ ok: false, message: 'expands too many aliases' });
    expect(readFrontmatterYaml('name: a\n__proto__: x\ntools: [a, b]')).toEqual({ ok: true, data: { name: 'a', ['__proto__']: 'x', tools: ['a', 'b'] } });
  });

  it('bounds from above the keys of any document, block or flow (fast-check: the seed is printed on failure)', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, fc.string({ maxLength: 6 }), fc.integer(), fc.constant(null), tie('list'), tie('map')),
      list: fc.array(tie('node'), { maxLength: 4 }),
      map: fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 5 }),
    }));
    fc.assert(
      fc.property(value.map, fc.constantFrom('block', 'flow') as fc.Arbitrary<'block' | 'flow'>, (data, collectionStyle) => {
        const yaml = stringify(data, { collectionStyle });
        expect(countKeyIndicators(yaml)).toBeGreaterThanOrEqual(exactKeys(yaml));
      }),
      { numRuns: 300 },
    );
  });

  it('skips the flooded agent file of a plugin with a diagnostic and reads its neighbour', async () => {
    const root = await realpath(await mkdtemp(path.join(tmpdir(), 'pc-frontmatter-')));
    try {
      await mkdir(path.join(root, 'agents'));
      await writeFile(path.join(root, 'agents', 'a-flood.md'), file(manyKeys(5000)));
      await writeFile(path.join(root, 'agents', 'b-fine.md'), file('name: fine\ndescription: ok'));
      const read = await readAgentFiles(path.join(root, 'agents'), root, 'kit');
      expect(read.agents.map((agent) => agent.name)).toEqual(['kit:fine']);
      expect(read.diagnostics).toEqual([
        expect.objectContaining({ plugin: 'kit', agent: 'a-flood', field: 'frontmatter', message: `has more than ${MAX_FRONTMATTER_KEYS} keys; agent skipped` }),
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
