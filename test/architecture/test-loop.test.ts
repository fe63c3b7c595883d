/**
 * The test loop cannot lie about what it ran:
 * - the build before the tests (test/setup/build.ts) makes dist/ the compilation of the current
 *   sources — judged by content, not modification times — and removes outputs whose source is
 *   gone; checked on a small project of its own in a temporary directory;
 * - the vitest projects (vitest.config.ts) hold every test file exactly once, with every browser
 *   suite in `browser` and every soak in `soak`;
 * - random test data comes from the run's printed seed (test/setup/seed.ts, test/setup/random.ts),
 *   so a failure replays with `TEST_SEED=<n>`: no other source of randomness in test/ but the
 *   exceptions listed below with their reason;
 * - no test waits on the clock for something to happen: it waits on the event (a message, a log
 *   line, a process's exit), or, where none exists, polls the condition through `waitUntil` with
 *   a bounded deadline; the few sleeps that are the behaviour under test are listed with why.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUITES } from '../../vitest.config.js';
import { ensureBuilt, FINGERPRINT_FILE } from '../setup/build.js';
import { seededRandom } from '../setup/random.js';
import { runSeed } from '../setup/seed.js';

const repo = resolve(import.meta.dirname, '../..');

/** Sources of randomness other than the seeded helper; `randomUUID()` (unique markers) is fine. */
const UNSEEDED = /\bMath\.random\s*\(|\brandom(?:Int|Bytes|Fill(?:Sync)?)\s*\(|\bgetRandomValues\s*\(/;
/** Files allowed an unseeded source, each with why. */
const UNSEEDED_ALLOWED: Record<string, string> = {
  'test/setup/seed.ts': 'makes the run seed itself when TEST_SEED is unset',
  'test/fixtures/fixture-env.ts': "key material of the fixture server's own request-state codec: a secret, not test data",
};

/**
 * A wait on the clock: a promise of a timer (`new Promise((r) => setTimeout(r, ms))`), a sleep or
 * delay helper, `timers/promises`. A yield to the event loop (`setImmediate`) waits for no time,
 * only for callbacks already queued, and is not one; nor is a stream's own `.pause()`, which
 * stops reading and waits for nothing.
 */
const SLEEPS = [
  /new Promise(?:<[^>]*>)?\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*setTimeout\(\s*\1\b/,
  /setTimeout\(\s*\(\)\s*=>\s*(?:resolve|done|wake)\(\s*\)/,
  /\btimers\/promises\b/,
  /\b(?:sleep|delay)\s*\(|(?<![.\w])pause\s*\(/,
];
/** Files allowed a wait on the clock, each with why. */
const SLEEPS_ALLOWED: Record<string, string> = {
  'test/integration/harness/wait.ts': "waitUntil: the one bounded poll, for conditions no event reports (a grandchild's death, a cache nothing outside reads, the server noticing a cut); each caller says why",
  'test/inbound/raw-socket.test.ts': 'a client trickling its body one byte per pace, slower than the request timeout: the pace is the behaviour under test',
};
/**
 * Not scanned for sleeps: test/fixtures and `children/` hold the upstream servers and child
 * programs the tests drive, whose pacing (progress every few ms, a slow start) is their behaviour.
 */
const NOT_TEST_CODE = /^test\/fixtures\/|\/children\//;

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(path, keep);
    return keep(entry.name) ? [path] : [];
  });
}

// Each case runs the real compiler (seconds on a busy machine): a hang guard, not a speed claim.
describe('the build before the tests', { timeout: 120_000 }, () => {
  let root: string;
  const src = (name: string) => join(root, 'src', name);
  const out = (name: string) => join(root, 'dist/src', name.replace(/\.ts$/, '.js'));

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'portcullis-build-'));
    mkdirSync(join(root, 'src'));
    writeFileSync(
      join(root, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [], skipLibCheck: true, outDir: 'dist', rootDir: '.' },
        include: ['src'],
      }),
    );
    writeFileSync(src('answer.ts'), 'export const answer: number = 41;\n');
    writeFileSync(src('gone.ts'), 'export const gone = true;\n');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('compiles the sources once, then leaves an up-to-date dist/ alone', () => {
    expect(ensureBuilt(root).built).toBe(true);
    expect(readFileSync(out('answer.ts'), 'utf8')).toContain('answer = 41');
    expect(existsSync(join(root, 'dist', FINGERPRINT_FILE))).toBe(true);
    expect(ensureBuilt(root)).toEqual({ built: false, pruned: [], ms: 0 });
  });

  it('rebuilds a source whose content changed even though its modification time went back', () => {
    const before = statSync(src('answer.ts'));
    writeFileSync(src('answer.ts'), 'export const answer: number = 42;\n');
    utimesSync(src('answer.ts'), before.atime, before.mtime);
    expect(ensureBuilt(root).built).toBe(true);
    expect(readFileSync(out('answer.ts'), 'utf8')).toContain('answer = 42');
  });

  it('removes the output of a source that is gone, so no test can still run it', () => {
    rmSync(src('gone.ts'));
    expect(ensureBuilt(root).pruned.sort()).toEqual(['dist/src/gone.js']);
    expect(existsSync(out('gone.ts'))).toBe(false);
  });

  it('writes again an output deleted by hand (an incremental build alone would not)', () => {
    rmSync(out('answer.ts'));
    expect(ensureBuilt(root).built).toBe(true);
    expect(readFileSync(out('answer.ts'), 'utf8')).toContain('answer = 42');
  });

  it("fails on a compile error with the compiler's diagnostic, and builds again on the next run", () => {
    writeFileSync(src('answer.ts'), "export const answer: number = 'forty-two';\n");
    expect(() => ensureBuilt(root)).toThrow(/src\/answer\.ts\(1,14\): error TS2322/);
    writeFileSync(src('answer.ts'), 'export const answer: number = 43;\n');
    expect(ensureBuilt(root).built).toBe(true);
    expect(readFileSync(out('answer.ts'), 'utf8')).toContain('answer = 43');
  });

  it('has built this run: dist/ is the compilation of the repository as it is now', () => {
    expect(ensureBuilt(repo).built).toBe(false);
  });
});

describe('the vitest projects', () => {
  const testFiles = files(join(repo, 'test'), (name) => name.endsWith('.test.ts')).map((file) => relative(repo, file));
  const listed = Object.values(SUITES).flat();

  it('name only existing test files, each in one project', () => {
    expect(listed.filter((file) => !testFiles.includes(file))).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('put every suite that drives a browser in `browser`', () => {
    const browser = testFiles.filter((file) => /from 'playwright(-core)?'/.test(readFileSync(join(repo, file), 'utf8')));
    expect(browser.length).toBeGreaterThan(0);
    expect(browser.filter((file) => !(SUITES.browser as readonly string[]).includes(file))).toEqual([]);
  });

  it('put every soak in `soak`', () => {
    const soaks = testFiles.filter((file) => /soak/.test(file));
    expect(soaks.length).toBeGreaterThan(0);
    expect(soaks.filter((file) => !(SUITES.soak as readonly string[]).includes(file))).toEqual([]);
  });
});

describe('random test data', () => {
  it('replays: one seed and one stream name give the same draws, another name others', () => {
    const draw = (name: string, seed: number) => {
      const random = seededRandom(name, seed);
      return [random.int(1_000_000), random.int(5, 10), random.next(), random.chance(0.5), random.bytes(4).toString('hex')];
    };
    expect(draw('a', 7)).toEqual(draw('a', 7));
    expect(draw('a', 7)).not.toEqual(draw('b', 7));
    expect(draw('a', 7)).not.toEqual(draw('a', 8));
  });

  it('keeps draws inside the asked range', () => {
    const random = seededRandom('range', 1);
    const ints = Array.from({ length: 2_000 }, () => random.int(3, 7));
    expect(new Set(ints)).toEqual(new Set([3, 4, 5, 6]));
    expect(() => random.int(5, 5)).toThrow(RangeError);
  });

  it('takes the run seed from TEST_SEED, a fresh one without it, and refuses a malformed one with the fix', () => {
    expect(runSeed('4294967295', () => 1)).toBe(4294967295);
    expect(runSeed(undefined, () => 123)).toBe(123);
    expect(runSeed(' ', () => 123)).toBe(123);
    for (const bad of ['-1', '1.5', 'abc', '4294967296', '0x10']) expect(() => runSeed(bad)).toThrow(/is not a seed: use the integer/);
  });

  it('comes from the seeded helper everywhere in test/, unseeded sources only where listed with a reason', () => {
    const offenders = files(join(repo, 'test'), (name) => /\.(ts|mjs|js)$/.test(name))
      .map((file) => relative(repo, file))
      .filter((file) => !(file in UNSEEDED_ALLOWED))
      .flatMap((file) =>
        readFileSync(join(repo, file), 'utf8')
          .split('\n')
          .flatMap((line, index) => (UNSEEDED.test(line) && !/^\s*(\*|\/\/)/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
      );
    expect(offenders).toEqual([]);
    for (const file of Object.keys(UNSEEDED_ALLOWED)) expect(UNSEEDED.test(readFileSync(join(repo, file), 'utf8')), `${file} still needs its exception`).toBe(true);
  });
});

describe('waiting in tests', () => {
  it('waits on events, never on the clock, except where listed with a reason', () => {
    const offenders = files(join(repo, 'test'), (name) => /\.(ts|mjs|js)$/.test(name))
      .map((file) => relative(repo, file))
      // This file is left out: it holds the shapes as examples.
      .filter((file) => !NOT_TEST_CODE.test(file) && !(file in SLEEPS_ALLOWED) && file !== 'test/architecture/test-loop.test.ts')
      .flatMap((file) =>
        readFileSync(join(repo, file), 'utf8')
          .split('\n')
          .flatMap((line, index) =>
            SLEEPS.some((pattern) => pattern.test(line)) && !/^\s*(\*|\/\/)/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
          ),
      );
    expect(offenders).toEqual([]);
    for (const file of Object.keys(SLEEPS_ALLOWED)) {
      const text = readFileSync(join(repo, file), 'utf8');
      expect(SLEEPS.some((pattern) => pattern.test(text)), `${file} still needs its exception`).toBe(true);
    }
  });

  it('recognises the shapes of a sleep, and not a hang guard or a yield', () => {
    const isSleep = (line: string) => SLEEPS.some((pattern) => pattern.test(line));
    for (const line of [
      'await new Promise((resolve) => setTimeout(resolve, 50));',
      'await new Promise((r) => setTimeout(r, 20));',
      'await new Promise<void>((done) => setTimeout(done, ms));',
      'await new Promise((resolve) => setTimeout(() => resolve(), 100));',
      "import { setTimeout as wait } from 'node:timers/promises';",
      'await sleep(1_000);',
      'const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));',
      'await pause(200);',
    ]) {
      expect(isSleep(line), line).toBe(true);
    }
    for (const line of [
      "timer = setTimeout(() => reject(new Error('hang guard')), ms);",
      'await new Promise((resolve) => setImmediate(resolve));',
      "if (hangUp) setTimeout(() => controller.abort(), random.int(0, 40));",
      "harness('ndjson-echo.mjs', ['--startup-delay=300']);",
      'res.pause();',
    ]) {
      expect(isSleep(line), line).toBe(false);
    }
  });
});
