/**
 * What a person at a terminal sees, on a real pseudo-terminal (util-linux `script`): readable log
 * lines rather than JSON, a line naming each server still starting while it starts (here one that
 * waits for the test's go-ahead, as a first `npx -y` download would keep it waiting), the Ready
 * line exactly as scripts read it, and a banner with the admin page, the metrics URL and a snippet
 * per client. Without a terminal the same run writes JSON lines and no banner.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI_JS, Cleanup, descendantsOf, FIXTURE_JS, killPids, READY_LINE, spawnCli, waitUntil } from '../integration/harness.js';

const ANSI = /\u001b\[[0-9;]*m/g;
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

const perFile = new Cleanup();
const perTest = new Cleanup();
let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-tty-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  // A stdio server that starts only once `trigger` exists, then is the ordinary fixture.
  writeFileSync(
    join(dir, 'slow-start.mjs'),
    `import { existsSync } from 'node:fs';
const [trigger, fixture] = process.argv.slice(2);
const timer = setInterval(() => {
  if (!existsSync(trigger)) return;
  clearInterval(timer);
  process.argv.splice(2, 2);
  import(fixture);
}, 50);
`,
  );
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

function writeConfig(name: string, trigger: string): string {
  const path = join(dir, `${name}.json`);
  const slow = { command: process.execPath, args: [join(dir, 'slow-start.mjs'), trigger, FIXTURE_JS, '--stdio'] };
  writeFileSync(path, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, servers: { slow } }));
  return path;
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

describe.skipIf(!hasScript)('on a terminal', () => {
  it('prints readable lines, the servers still starting, the Ready line unchanged and a banner to connect clients', async () => {
    const trigger = join(dir, 'go-tty');
    const config = writeConfig('tty', trigger);
    // `exec`: the gateway is script's own child, so it can be signalled by pid.
    const child = spawn('script', ['-qfec', `exec ${quote(process.execPath)} ${quote(CLI_JS)} --config ${quote(config)}`, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    perTest.add(() => killPids([...descendantsOf(child.pid!).map((p) => p.pid), child.pid!]));
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const lines = () => output.replace(ANSI, '').split(/\r?\n/);

    const progress = await waitUntil(() => lines().find((line) => /still starting: slow \(\d+ s\)/.test(line)), 'a still-starting line', 30_000);
    expect(progress).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: still starting: slow \(\d+ s\) \{"servers":\["slow"\],"seconds":\d+\}$/);
    expect(lines()).toContainEqual(expect.stringMatching(/^\[\d\d:\d\d:\d\d\] INFO: starting 1 server\(s\): slow /));
    writeFileSync(trigger, 'go');

    const url = await waitUntil(() => lines().map((line) => READY_LINE.exec(line)?.[1]).find((found) => found !== undefined), 'the Ready line', 30_000);
    await waitUntil(() => lines().some((line) => line.startsWith('Ctrl-C stops')), 'the end of the banner');
    const text = lines();
    expect(text).toContain(`[portcullis]:Ready. ${url}`);
    const origin = new URL(url).origin;
    expect(text).toContain(`  MCP URL     ${url}`);
    expect(text).toContain(`  Admin page  ${url}/admin`);
    expect(text).toContain(`  Metrics     ${origin}/metrics`);
    expect(text).toContain(`  Claude Desktop  { "mcpServers": { "portcullis": { "command": "npx", "args": ["-y", "mcp-remote", "${url}"] } } }`);
    expect(text).toContain(`  Cursor          { "mcpServers": { "portcullis": { "url": "${url}" } } }`);
    expect(text).toContain(`  VS Code         { "servers": { "portcullis": { "type": "http", "url": "${url}" } } }`);
    // Every log line is readable, none is JSON.
    expect(text.filter((line) => line.startsWith('{"level"'))).toEqual([]);
    expect(text).toContainEqual(expect.stringMatching(/^\[\d\d:\d\d:\d\d\] INFO: upstream ready \{"server":"slow"\}$/));

    const gateway = descendantsOf(child.pid!).find((p) => p.cmdline.includes(CLI_JS));
    expect(gateway).toBeDefined();
    process.kill(gateway!.pid, 'SIGTERM');
    await waitUntil(() => child.exitCode !== null || child.signalCode !== null, 'script to exit', 30_000);
    expect(descendantsOf(child.pid!)).toEqual([]);
  });
});

describe('without a terminal', () => {
  it('writes JSON log lines (the URLs as fields) and no banner', async () => {
    const trigger = join(dir, 'go-pipe');
    writeFileSync(trigger, 'go');
    const cli = spawnCli(perTest, ['--config', writeConfig('pipe', trigger)]);
    const url = await cli.waitForLine(READY_LINE);
    const records = await waitUntil(() => {
      const parsed = cli.stderr().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
      return parsed.some((record) => record.msg === 'serving') ? parsed : undefined;
    }, 'the serving line');
    expect(records.find((record) => record.msg === 'serving')).toMatchObject({ level: 30, mcp: url, admin: `${url}/admin`, metrics: `${new URL(url).origin}/metrics` });
    expect(cli.stdout()).toBe(`[portcullis]:Ready. ${url}\n`);
    cli.child.kill('SIGTERM');
    expect((await cli.exited()).code).toBe(0);
  });
});
