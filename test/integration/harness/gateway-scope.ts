/**
 * The setup most integration files share: both fixture upstreams (stdio and HTTP, recorded) and
 * a gateway in front of them, started once per file; per-test clients cleaned up after each test.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RunningGateway } from '../../../src/gateway.js';
import { startTestGateway } from './clients.js';
import { assertBuilt } from './paths.js';
import { startUpstreams, type Upstreams } from './upstreams.js';
import { Cleanup } from './wait.js';

/** The two upstream kinds every file runs its cases against. */
export type UpstreamKind = 'stdio' | 'http';
export const UPSTREAM_KINDS: readonly UpstreamKind[] = ['stdio', 'http'];

export interface GatewayScope {
  readonly perFile: Cleanup;
  readonly perTest: Cleanup;
  /** Available from the file's first test on (started in `beforeAll`). */
  readonly upstreams: Upstreams;
  readonly gateway: RunningGateway;
}

/**
 * Registers the hooks and returns the scope they fill. Call once, at the top of a test file;
 * `extra` is merged into each server entry (a file that tests one isolation names it).
 */
export function gatewayOverUpstreams(extra: Parameters<Upstreams['servers']>[0] = {}): GatewayScope {
  const perFile = new Cleanup();
  const perTest = new Cleanup();
  let upstreams: Upstreams | undefined;
  let gateway: RunningGateway | undefined;
  beforeAll(async () => {
    assertBuilt();
    upstreams = await startUpstreams(perFile);
    gateway = await startTestGateway(perFile, upstreams.servers(extra));
  });
  afterEach(() => perTest.run());
  afterAll(() => perFile.run());
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the gateway scope is used before beforeAll ran');
    return value;
  };
  return {
    perFile,
    perTest,
    get upstreams() {
      return started(upstreams);
    },
    get gateway() {
      return started(gateway);
    },
  };
}
