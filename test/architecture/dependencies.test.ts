/**
 * The dependency direction of src/ (`.dependency-cruiser.cjs`, explained in docs/architecture.md)
 * holds, and the rules really catch what they name: a tree with one violation of each is cruised
 * with the same config and every violation is reported, nothing else.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '../..');
const cli = join(repo, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const config = join(repo, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** Cruises `src` under `cwd` with the repo's rules; depcruise exits non-zero on violations, so read its JSON either way. */
async function cruise(cwd: string): Promise<Violation[]> {
  let stdout: string;
  try {
    ({ stdout } = await run(process.execPath, [cli, 'src', '--config', config, '--output-type', 'json'], { cwd, maxBuffer: 64 * 1024 * 1024 }));
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    if (failed.stdout === undefined || failed.stdout === '') throw new Error(`depcruise failed: ${failed.stderr ?? String(error)}`);
    stdout = failed.stdout;
  }
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

/** `rule: from → to`, a package named by its name alone (its resolved file depends on where node_modules lives). */
const readable = (violations: Violation[]) =>
  violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to.replace(/^.*node_modules\/((?:@[^/]+\/)?[^/]+)\/.*$/, 'package $1')}`).sort();

describe('dependency rules', () => {
  it('hold for src/', { timeout: 120_000 }, async () => {
    expect(readable(await cruise(repo))).toEqual([]);
  });

  describe('on a tree that breaks each rule once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-depcruise-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const files: Record<string, string> = {
      // Allowed: each layer importing the one below, and the leaves.
      'src/gateway.ts': "import './inbound/endpoint.js';\n",
      'src/inbound/endpoint.ts': "import type { R } from '../routing/router.js';\nimport '../policy/check.js';\nexport type I = R;\n",
      'src/routing/router.ts': "import type { C } from '../catalogue/catalogue.js';\nimport '../upstream/link.js';\nexport type R = C;\n",
      'src/catalogue/catalogue.ts': "import '../naming/names.js';\nimport type { U } from '../upstream/link.js';\nexport type C = U;\n",
      'src/upstream/link.ts': "import '../net/guard.js';\nimport '../rpc/sink.js';\nexport type U = string;\n",
      'src/net/guard.ts': "import '../errors.js';\n",
      'src/naming/names.ts': 'export {};\n',
      'src/rpc/sink.ts': 'export {};\n',
      'src/errors.ts': 'export {};\n',
      'src/policy/check.ts': "import '../naming/names.js';\n",
      'test/helper.ts': 'export {};\n',
      // One violation each (type-only where a value import would also close a cycle).
      'src/upstream/a.ts': "import './b.js';\n",
      'src/upstream/b.ts': "import './a.js';\n",
      'src/inbound/reach.ts': "import type { U } from '../upstream/link.js';\nexport type X = U;\n",
      'src/inbound/top.ts': "import type {} from '../gateway.js';\n",
      'src/routing/up.ts': "import type { I } from '../inbound/endpoint.js';\nexport type X = I;\n",
      'src/catalogue/up.ts': "import type { R } from '../routing/router.js';\nexport type X = R;\n",
      'src/upstream/up.ts': "import type { C } from '../catalogue/catalogue.js';\nexport type X = C;\n",
      'src/policy/up.ts': "import type { C } from '../catalogue/catalogue.js';\nexport type X = C;\n",
      'src/cluster/up.ts': "import type { I } from '../inbound/endpoint.js';\nexport type X = I;\n",
      'src/session/up.ts': "import type { U } from '../upstream/link.js';\nexport type X = U;\n",
      'src/plugins/up.ts': "import type { C } from '../catalogue/catalogue.js';\nexport type X = C;\n",
      'src/net/up.ts': "import type { U } from '../upstream/link.js';\nexport type X = U;\n",
      'src/net/test.ts': "import '../../test/helper.js';\n",
      'src/net/dev.ts': "import 'vitest';\n",
      'src/net/unlisted.ts': "import 'hono';\n",
      'src/net/missing.ts': "import './nowhere.js';\n",
      'package.json': JSON.stringify({ name: 'tree', type: 'module', devDependencies: { vitest: '*' } }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src', 'test'] }),
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');

    it('reports every broken rule and no allowed import', { timeout: 120_000 }, async () => {
      expect(readable(await cruise(dir))).toEqual(
        [
          'no-value-cycles: src/upstream/a.ts → src/upstream/b.ts',
          'composition-is-the-top: src/inbound/top.ts → src/gateway.ts',
          'inbound-goes-through-routing: src/inbound/reach.ts → src/upstream/link.ts',
          'routing-below-inbound: src/routing/up.ts → src/inbound/endpoint.ts',
          'catalogue-below-routing: src/catalogue/up.ts → src/routing/router.ts',
          'upstream-below-catalogue: src/upstream/up.ts → src/catalogue/catalogue.ts',
          'leaves-import-only-leaves: src/policy/up.ts → src/catalogue/catalogue.ts',
          'cluster-beside-inbound: src/cluster/up.ts → src/inbound/endpoint.ts',
          'session-below-inbound: src/session/up.ts → src/upstream/link.ts',
          'plugins-are-declarations: src/plugins/up.ts → src/catalogue/catalogue.ts',
          'net-is-low: src/net/up.ts → src/upstream/link.ts',
          'src-not-to-tests: src/net/test.ts → test/helper.ts',
          'src-not-to-dev-deps: src/net/dev.ts → package vitest',
          'src-not-to-unlisted-packages: src/net/unlisted.ts → package hono',
          'src-imports-resolve: src/net/missing.ts → ./nowhere.js',
        ].sort(),
      );
    });
  });
});
