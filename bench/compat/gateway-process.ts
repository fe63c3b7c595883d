/**
 * The built gateway (`dist/src/main.js`) as a child process on 127.0.0.1 port 0, fronting
 * `@modelcontextprotocol/server-everything` over stdio, with a config written to a temp
 * directory. Resolves with its MCP URL once the Ready line is on stdout; `stop()` ends it by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const MAIN_JS = join(ROOT, 'dist/src/main.js');
export const EVERYTHING_JS = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

export interface GatewayProcess {
  url: string;
  pid: number;
  configFile: string;
  stop(): Promise<void>;
}

/** The config the measurement runs against (`extra` merges into each server entry). */
export function compatConfig(serverExtra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    servers: {
      everything: { transport: 'stdio', command: process.execPath, args: [EVERYTHING_JS, 'stdio'], ...serverExtra },
    },
  };
}

export async function startGatewayProcess(config: Record<string, unknown>, readyTimeoutMs = 30_000): Promise<GatewayProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-compat-'));
  const configFile = join(dir, 'gateway.json');
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const child: ChildProcess = spawn(process.execPath, [MAIN_JS, '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`gateway not ready after ${readyTimeoutMs} ms: ${stderr}`)), readyTimeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /\[portcullis\]:Ready\. (\S+)/.exec(out);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited (${code}) before Ready: ${stderr}`));
    });
  });
  const pid = child.pid ?? -1;
  return {
    url,
    pid,
    configFile,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        process.kill(pid, 'SIGTERM');
        const timer = setTimeout(() => child.exitCode === null && process.kill(pid, 'SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
