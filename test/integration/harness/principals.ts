/**
 * Bearer principals for tests where data could cross between clients: each name gets a random
 * token in its own environment variable, and a gateway started with them authenticates each
 * client as exactly one of them (`auth: { kind: "bearer" }`).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGateway, type RunningGateway } from '../../../src/gateway.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { gatewayConfig } from './clients.js';
import { within, type Cleanup } from './wait.js';

export interface Principals {
  /** The gateway's `auth` block naming every principal. */
  readonly auth: Record<string, unknown>;
  /** The token variables the gateway reads. */
  readonly env: Record<string, string>;
  /** `Authorization` header of one principal. */
  headers(name: string): Record<string, string>;
}

export function bearerPrincipals(...names: string[]): Principals {
  const variable = (name: string) => `IT_PRINCIPAL_${name.toUpperCase()}_${process.pid}`;
  const tokens = new Map(names.map((name) => [name, `${name}-${randomUUID()}`]));
  return {
    auth: { kind: 'bearer', tokens: names.map((name) => ({ principal: name, env: variable(name) })) },
    env: Object.fromEntries(names.map((name) => [variable(name), tokens.get(name)!])),
    headers: (name) => {
      const token = tokens.get(name);
      if (token === undefined) throw new Error(`no principal named ${name}`);
      return { Authorization: `Bearer ${token}` };
    },
  };
}

/** Starts a gateway in this process that authenticates `principals`; closed by `cleanup`. */
export async function startGatewayFor(
  cleanup: Cleanup,
  principals: Principals,
  servers: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<RunningGateway> {
  const gateway = await startGateway({
    config: gatewayConfig(servers, { auth: principals.auth, ...extra }),
    logger: silentLogger(),
    env: { ...process.env, ...principals.env },
  });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
  return gateway;
}

/** A policy file in a fresh temporary directory (config `policy` takes a path); returns its path. */
export function policyFile(policy: Record<string, unknown>): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'portcullis-policy-')), 'policy.json');
  writeFileSync(file, JSON.stringify(policy));
  return file;
}
