import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRepoRoot, loaderArgs, suiteEntry, SUITES } from './conformance-suites.js';
import { parseTotals } from './run-suite.js';

describe('parseTotals', () => {
  it.each([
    ['=== SUMMARY ===\n✓ ping: 1 passed, 0 failed\n\nTotal: 40 passed, 0 failed\n', { passed: 40, failed: 0 }],
    ['Total: 3 passed, 2 failed\n…\nTotal: 70 passed, 3 failed', { passed: 70, failed: 3 }],
    ['Error: connect ECONNREFUSED 127.0.0.1:1', undefined],
    ['Test Results:\nPassed: 3/3, 0 failed, 0 warnings\n', { passed: 1, failed: 0 }],
    ['Test Results:\nPassed: 2/3, 1 failed, 0 warnings\n', { passed: 0, failed: 1 }],
  ])('reads the totals of %j', (output, expected) => {
    expect(parseTotals(output)).toEqual(expected);
  });
});

describe('locating the suites', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('finds the repository root and every installed suite entry', () => {
    expect(findRepoRoot()).toMatch(/\S/);
    for (const suite of SUITES) expect(suiteEntry(suite.packageName)).toMatch(/dist[\\/]index\.js$/);
  });

  it('uses the repository loader on Node 20 and none on Node 22', () => {
    const root = findRepoRoot();
    expect(loaderArgs(root, '20.20.2')).toEqual(['--import', join(root, 'test', 'conformance', 'node20', 'register.mjs')]);
    expect(loaderArgs(root, '22.1.0')).toEqual([]);
  });

  it('refuses to run on Node 20 from a checkout that lacks the loader', () => {
    const base = mkdtempSync(join(tmpdir(), 'loader-'));
    dirs.push(base);
    expect(() => loaderArgs(join(base, 'repo'), '20.20.2')).toThrow(/register\.mjs/);
  });
});
