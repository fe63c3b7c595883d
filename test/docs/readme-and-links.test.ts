/**
 * The README is a newcomer's first screen and docs/ holds the reference: the README stays short
 * and true (the two commands, a config that parses, where clients point), and every relative link
 * in the README, docs/ and policies/README.md reaches a file that exists and, with a `#fragment`,
 * a heading in it (GitHub's anchor rule).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { parseConfigText } from '../../src/config/config-text.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** Markdown text with fenced code blocks blanked (links inside code are not links). */
function withoutCode(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen; repeats get -1, -2 … */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', 'policies/README.md', ...docs];
}

describe('the README', () => {
  it('is a first screen, not the reference: under 120 lines, linking docs/reference.md', () => {
    expect(readme.split('\n').length).toBeLessThan(120);
    expect(readme).toContain('](docs/reference.md)');
  });

  it('gives the two commands a clone answers to', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBeDefined();
    expect(scripts.test).toBeDefined();
  });

  it('shows a config of six lines that the gateway accepts as it is', () => {
    const example = /```json\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(example!.split('\n')).toHaveLength(6);
    const config = parseConfig(parseConfigText(example!));
    expect(Object.keys(config.servers)).toEqual(['files', 'memory']);
  });

  it('says how Claude Desktop, Cursor and VS Code reach the gateway, how to check it, and what isolation costs', () => {
    for (const text of ['Claude Desktop', 'Cursor', 'VS Code', 'mcp-remote', '/readyz', '/mcp/admin', '"isolation"', 'child process']) {
      expect(readme).toContain(text);
    }
  });

  it('leaves no stray files at the repository root', () => {
    expect(existsSync(join(root, 'inuse.json'))).toBe(false);
  });
});

describe('relative links in the README, docs/ and policies/README.md', () => {
  const files = markdownFiles();
  it.each(files)('every one in %s resolves to a file, and a #fragment to one of its headings', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const broken: string[] = [];
    for (const match of withoutCode(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const link = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http:, https:, mailto:
      const [path, fragment] = link.split('#', 2) as [string, string | undefined];
      const target = path === '' ? join(root, file) : resolve(dirname(join(root, file)), decodeURIComponent(path));
      if (!existsSync(target)) {
        broken.push(`${link} (no ${relative(root, target)})`);
        continue;
      }
      if (fragment === undefined || fragment === '' || statSync(target).isDirectory() || !target.endsWith('.md')) continue;
      if (!anchorsOf(readFileSync(target, 'utf8')).has(fragment)) broken.push(`${link} (no heading #${fragment})`);
    }
    expect(broken).toEqual([]);
  });
});
