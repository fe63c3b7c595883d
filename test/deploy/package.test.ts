/**
 * The npm package works outside the repository: what `npm pack` puts in the tarball (the same
 * files a global install or `npx portcullis` gets) runs from another directory, finds its shipped
 * policies, and declares every package its compiled code imports. Needs `npm run build` first
 * (`npm test` does it).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  files: string[];
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};

let work: string;
let unpacked: string;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Runs the packed `portcullis` bin with `cwd` outside the repository. */
function portcullis(args: string[]) {
  const bin = join(unpacked, manifest.bin['portcullis'] ?? 'missing');
  return spawnSync(process.execPath, [bin, ...args], { cwd: work, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env['PATH'] ?? '' } });
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'portcullis-pack-'));
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
  execFileSync('tar', ['xzf', join(work, filename), '-C', work]);
  unpacked = join(work, 'package');
  // The installed package's dependencies; the import check below proves they are all declared.
  symlinkSync(join(root, 'node_modules'), join(unpacked, 'node_modules'), 'dir');
});

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the npm package', () => {
  it('has a bin that starts with a node shebang and is in the tarball', () => {
    const bin = manifest.bin['portcullis'];
    expect(bin).toBe('dist/src/main.js');
    expect(readFileSync(join(unpacked, bin ?? ''), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('builds itself when installed from git (prepare) and ships no tests or benchmarks', () => {
    expect(manifest.scripts['prepare']).toMatch(/\btsc -p tsconfig\.json\b/);
    const shipped = filesUnder(unpacked).map((file) => file.slice(unpacked.length + 1));
    expect(shipped.some((file) => file.startsWith('dist/test/') || file.startsWith('dist/bench/') || file.startsWith('src/'))).toBe(false);
    expect(shipped).toContain('policies/default.json');
    expect(shipped).toContain('policies/strict.json');
  });

  it('runs from a directory outside the repository and finds its shipped policies', () => {
    writeFileSync(join(work, 'gateway.json'), JSON.stringify({ policy: 'strict', servers: { notes: { command: process.execPath, args: ['notes.js'] } } }));
    const help = portcullis(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: portcullis');
    const { version } = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as { version: string };
    expect(portcullis(['--version']).stdout).toBe(`${version}\n`);
    const check = portcullis(['check', '--config', 'gateway.json']);
    expect(check.stderr).toBe('');
    expect(check.stdout).toContain('configuration ok: 1 server(s)');
    expect(check.status).toBe(0);
  });

  it('declares every package that its compiled code imports', () => {
    const builtins = new Set(builtinModules);
    const imported = new Set<string>();
    for (const file of filesUnder(join(unpacked, 'dist/src')).filter((f) => f.endsWith('.js'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/(?:^|\s)(?:import|export)\s[^'"]*?from\s+['"]([^'"./][^'"]*)['"]|import\(\s*['"]([^'"./][^'"]*)['"]\s*\)/gm)) {
        const spec = match[1] ?? match[2] ?? '';
        if (spec.startsWith('node:') || builtins.has(spec)) continue;
        imported.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0] ?? spec);
      }
    }
    expect(imported.size).toBeGreaterThan(5);
    expect([...imported].filter((pkg) => manifest.dependencies[pkg] === undefined)).toEqual([]);
  });
});
