/**
 * The policy's `access` rules through a real gateway, for callers whose JWTs carry different
 * `groups`: each one's lists are its own (tools, prompts, resources), a hidden tool or resource
 * answers exactly like an unknown one on call and read, in both eras, and a list built for one
 * caller is never served to another (the lists of a narrowed view are `private` to 2026 caches).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { assertBuilt, Cleanup, connectClient, ERAS, startTestGateway, startUpstreams, textOf } from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const ISSUER = 'https://idp.test';
const AUDIENCE = 'portcullis-access-test';
let dir: string;
let signingKey: CryptoKey;
let gateway: RunningGateway;

const POLICY = {
  access: {
    default: 'deny',
    rules: [
      { name: 'ops-never-crash', claims: { groups: ['ops'] }, effect: 'deny', tools: ['*crash*'] },
      { name: 'eng-and-ops-everything', claims: { groups: ['eng', 'ops'] }, effect: 'allow' },
      { name: 'sales-echo', claims: { groups: ['sales'] }, effect: 'allow', tools: ['stdio__echo'] },
    ],
  },
};

async function tokenFor(sub: string, groups: string[]): Promise<Record<string, string>> {
  const jwt = await new SignJWT({ groups })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(sub)
    .setExpirationTime('10m')
    .sign(signingKey);
  return { Authorization: `Bearer ${jwt}` };
}

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-access-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  signingKey = privateKey;
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }));
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY));
  const upstreams = await startUpstreams(perFile);
  gateway = await startTestGateway(perFile, upstreams.servers(), {
    policy: join(dir, 'policy.json'),
    auth: { kind: 'jwt', jwks: { file: join(dir, 'jwks.json') }, issuer: ISSUER, audience: AUDIENCE, algorithms: ['ES256'] },
  });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const names = (items: Array<{ name?: string; uri?: string }>) => items.map((item) => item.name ?? item.uri).sort();

describe.each(ERAS)('per-principal lists and calls, %s era', (era) => {
  it('shows each caller what its groups allow, and nothing of another caller', async () => {
    const eng = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`eng-${era}`, ['eng']) });
    const sales = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`sales-${era}`, ['sales']) });
    const nobody = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`nobody-${era}`, ['visitors']) });
    // eng lists first: whatever it built must not be what sales reads.
    const engTools = names((await eng.client.listTools()).tools);
    expect(engTools).toEqual(expect.arrayContaining(['stdio__echo', 'stdio__slow', 'stdio__crash', 'http__echo']));
    expect(names((await sales.client.listTools()).tools)).toEqual(['stdio__echo']);
    expect((await nobody.client.listTools()).tools).toEqual([]);
    // A server's other parts follow its server decision: sales sees no resource or prompt of it.
    expect((await eng.client.listResources()).resources.length).toBeGreaterThan(0);
    expect((await sales.client.listResources()).resources).toEqual([]);
    expect((await sales.client.listPrompts()).prompts).toEqual([]);
    // The eng view is still whole after sales listed.
    expect(names((await eng.client.listTools()).tools)).toEqual(engTools);
  });

  it('answers a hidden tool or resource exactly like an unknown one', async () => {
    const sales = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`sales2-${era}`, ['sales']) });
    expect(textOf(await sales.client.callTool({ name: 'stdio__echo', arguments: { text: 'ok' } }))).toContain('ok');
    const hidden = await sales.client.callTool({ name: 'stdio__slow', arguments: { ms: 0 } }).catch((e: unknown) => e as { code: number; message: string });
    const unknown = await sales.client.callTool({ name: 'stdio__no_such_tool', arguments: {} }).catch((e: unknown) => e as { code: number; message: string });
    expect(hidden).toMatchObject({ code: -32602 });
    expect((hidden as { message: string }).message.replace('stdio__slow', 'X')).toBe((unknown as { message: string }).message.replace('stdio__no_such_tool', 'X'));
    await expect(sales.client.readResource({ uri: 'test://static-text' })).rejects.toMatchObject({ message: expect.stringMatching(/not found/i) });
  });

  it('lets a deny rule listed first win over a later allow for the same caller', async () => {
    const ops = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`ops-${era}`, ['ops']) });
    const tools = names((await ops.client.listTools()).tools);
    expect(tools).toContain('stdio__echo');
    expect(tools).toContain('stdio__slow');
    // eng sees stdio__crash (first test); ops, matched by the deny rule first, does not.
    expect(tools).not.toContain('stdio__crash');
    await expect(ops.client.callTool({ name: 'stdio__crash', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });
});

describe('2026 caching hints of a narrowed view', () => {
  it('marks every list built for a restricted caller private', async () => {
    const sales = await connectClient(perTest, gateway.url, '2026', { headers: await tokenFor('sales-cache', ['sales']) });
    const result = (await sales.client.listTools()) as unknown as { cacheScope?: string };
    expect(result.cacheScope).toBe('private');
  });
});
