/**
 * The token sources of the servers with `upstreamAuth`, against a real token endpoint on
 * 127.0.0.1: a reload that moves a server's `url` (a plain restart of it) gets tokens for the new
 * resource, never the old one's cached token, and the old source's endpoint connection is
 * closed; a stopped server's tokens are forgotten; no token reaches the logs.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteServerConfig } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SubjectTokens, type SubjectClaims } from '../../../src/upstream/credentials/subject-tokens.js';
import { upstreamCredentials, type UpstreamCredentials } from '../../../src/upstream/credentials/upstream-credentials.js';
import { SECRET, startTokenEndpoint, type TokenEndpoint } from './token-endpoint-fixture.js';

/** Records `token` as `principal`'s latest, as a request authenticated with it does. */
function remember(store: SubjectTokens, principal: string, token: string, claims: SubjectClaims): void {
  store.run(principal, token, claims, () => undefined);
}

const ISSUER = 'https://idp.example.com';
const URL_A = 'https://crm-a.example.com/mcp';
const URL_B = 'https://crm-b.example.com/mcp';
let endpoint: TokenEndpoint;
const logLines: string[] = [];
const issuedTokens: string[] = [];
let credentials: UpstreamCredentials;
const subjects = new SubjectTokens();

beforeAll(async () => {
  endpoint = await startTokenEndpoint();
});
afterAll(() => endpoint.close());
afterEach(() => credentials.close());
beforeEach(() => {
  endpoint.reset();
  credentials = upstreamCredentials((name) => (name === 'CRM_CLIENT_SECRET' ? SECRET : undefined), createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(line) } }), {
    subjectTokens: subjects,
    subjectIssuer: ISSUER,
  });
});

/** The `crm` entry as the schema parses it, with `upstreamAuth` of `kind` and the given `url`. */
function crm(kind: 'clientCredentials' | 'tokenExchange', url: string): RemoteServerConfig {
  const upstreamAuth = { kind, tokenUrl: endpoint.url, clientId: 'client', clientSecretEnv: 'CRM_CLIENT_SECRET', allowPrivateNetwork: true };
  const auth = { kind: 'jwt', jwks: { url: `${ISSUER}/jwks` }, issuer: ISSUER, audience: 'https://gw.example.com/mcp' };
  const isolation = kind === 'tokenExchange' ? { isolation: 'principal' } : {};
  return parseConfig({ auth, servers: { crm: { transport: 'streamableHttp', url, ...isolation, upstreamAuth } } }).servers.crm as RemoteServerConfig;
}

const alice = { kind: 'principal', principal: 'alice' } as const;

describe.each(['clientCredentials', 'tokenExchange'] as const)('%s across a reload that moves the url', (kind) => {
  it("asks tokens for the new url as resource, never serves the old one's, and closes the old endpoint connection", async () => {
    remember(subjects, 'alice', 'subject-alice', { exp: Date.now() / 1000 + 3_600, iss: ISSUER });
    const before = credentials.tokenSourceFor('crm', crm(kind, URL_A), alice)!;
    const old = await before.token();
    issuedTokens.push(old);
    expect(endpoint.requests.map((f) => f.get('resource'))).toEqual([URL_A]);
    // The same entry asked again (another connection of the same server): the same token.
    expect(await credentials.tokenSourceFor('crm', crm(kind, URL_A), alice)!.token()).toBe(old);
    const after = credentials.tokenSourceFor('crm', crm(kind, URL_B), alice)!;
    const fresh = await after.token();
    issuedTokens.push(fresh);
    expect(fresh).not.toBe(old);
    expect(endpoint.requests.map((f) => f.get('resource'))).toEqual([URL_A, URL_B]);
    // A connection of the old entry still draining cannot get a token any more.
    before.invalidate(old);
    await expect(before.token()).rejects.toThrow(/upstream "crm": could not get an access token/);
    expect(endpoint.requests).toHaveLength(2);
  });

  it('forgets the tokens of a server that was stopped', async () => {
    remember(subjects, 'alice', 'subject-alice', { exp: Date.now() / 1000 + 3_600, iss: ISSUER });
    issuedTokens.push(await credentials.tokenSourceFor('crm', crm(kind, URL_A), alice)!.token());
    credentials.forget('crm');
    issuedTokens.push(await credentials.tokenSourceFor('crm', crm(kind, URL_A), alice)!.token());
    expect(endpoint.requests).toHaveLength(2);
  });
});

describe('the logs', () => {
  // Last: after every token above was issued.
  it('never hold a token issued, the subject token, or the client secret', () => {
    expect(issuedTokens.length).toBeGreaterThanOrEqual(8);
    const logs = logLines.join('');
    for (const token of [...issuedTokens, 'subject-alice', SECRET]) expect(logs).not.toContain(token);
  });
});
