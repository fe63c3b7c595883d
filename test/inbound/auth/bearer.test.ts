import { describe, expect, it } from 'vitest';
import { authConfigSchema } from '../../../src/config/auth-schema.js';
import { compileAuthenticator, type AuthResult } from '../../../src/inbound/auth/authenticate.js';
import { captureLog, leaks } from './capture-log.js';

const ALICE = 'alice-0123456789abcdefghijklmnopqrstuv';
const BOB = 'bob-ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210';
const ENV: Record<string, string> = { ALICE_TOKEN: ALICE, BOB_TOKEN: BOB };

const config = authConfigSchema.parse({
  kind: 'bearer',
  tokens: [
    { principal: 'alice', env: 'ALICE_TOKEN' },
    { principal: 'bob', env: 'BOB_TOKEN' },
  ],
});

function setup(env: Record<string, string | undefined> = ENV) {
  const log = captureLog();
  const authenticator = compileAuthenticator(config, { readEnv: (name) => env[name], logger: log.logger });
  return { authenticator, log };
}

/** Same length as ALICE, differing in the last character only. */
const SAME_LENGTH = `${ALICE.slice(0, -1)}${ALICE.endsWith('x') ? 'y' : 'x'}`;

describe('bearer authentication', () => {
  const vectors: readonly (readonly [string, readonly string[], AuthResult['ok'], string])[] = [
    ['the right token', [`Bearer ${ALICE}`], true, 'alice'],
    ["another principal's token", [`Bearer ${BOB}`], true, 'bob'],
    ['a lowercase scheme', [`bearer ${ALICE}`], true, 'alice'],
    ['a wrong token of the same length', [`Bearer ${SAME_LENGTH}`], false, 'AUTH_INVALID'],
    ['a wrong token of another length', [`Bearer ${ALICE}extra`], false, 'AUTH_INVALID'],
    ['a prefix of the right token', [`Bearer ${ALICE.slice(0, 10)}`], false, 'AUTH_INVALID'],
    ['no Authorization header', [], false, 'AUTH_MISSING'],
    ['a malformed header', [`Bearer ${ALICE} ${ALICE}`], false, 'AUTH_MALFORMED'],
    ['a duplicated header (same token twice)', [`Bearer ${ALICE}`, `Bearer ${ALICE}`], false, 'AUTH_MALFORMED'],
    ['a duplicated header (two principals)', [`Bearer ${ALICE}`, `Bearer ${BOB}`], false, 'AUTH_MALFORMED'],
    ['the Basic scheme', [`Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}`], false, 'AUTH_MALFORMED'],
  ];

  it.each(vectors)('answers %s', async (_name, headers, ok, expected) => {
    const { authenticator, log } = setup();
    const result = await authenticator.authenticate(headers);
    expect(result.ok).toBe(ok);
    if (result.ok) {
      expect(result.principal).toBe(expected);
    } else {
      // Malformed Bearer credentials are a bad request (RFC 6750 §3.1); another scheme is no credentials at all.
      const status = expected === 'AUTH_MALFORMED' && headers.every((h) => /^bearer /i.test(h)) ? 400 : 401;
      expect(result).toMatchObject({ status, code: expected });
      expect(leaks([result.message, result.wwwAuthenticate], [ALICE, BOB, SAME_LENGTH])).toBeUndefined();
    }
    expect(leaks(log.lines, [ALICE, BOB, SAME_LENGTH])).toBeUndefined();
  });

  it('challenges per RFC 6750 §3.1: no error code without Bearer credentials', async () => {
    const { authenticator } = setup();
    const missing = await authenticator.authenticate([]);
    const basic = await authenticator.authenticate(['Basic abc']);
    const malformed = await authenticator.authenticate(['Bearer a b']);
    const invalid = await authenticator.authenticate(['Bearer nope']);
    expect(!missing.ok && missing.wwwAuthenticate).toBe('Bearer realm="portcullis"');
    expect(!basic.ok && basic.wwwAuthenticate).toBe('Bearer realm="portcullis"');
    expect(!malformed.ok && malformed.wwwAuthenticate).toBe('Bearer realm="portcullis", error="invalid_request"');
    expect(!invalid.ok && invalid.wwwAuthenticate).toBe('Bearer realm="portcullis", error="invalid_token"');
  });

  it('logs why a token was refused at debug, without the token', async () => {
    const { authenticator, log } = setup();
    await authenticator.authenticate([`Bearer ${SAME_LENGTH}`]);
    const refused = log.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.code === 'AUTH_INVALID');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 20, component: 'auth', reason: 'unknown token' });
    expect(leaks(log.lines, [SAME_LENGTH])).toBeUndefined();
  });

  it('reads the environment once, at compile time', async () => {
    const reads: string[] = [];
    const env = { ...ENV };
    const authenticator = compileAuthenticator(config, {
      readEnv: (name) => (reads.push(name), env[name]),
      logger: captureLog().logger,
    });
    expect(reads).toEqual(['ALICE_TOKEN', 'BOB_TOKEN']);
    env.ALICE_TOKEN = 'rotated-value-that-is-long-enough';
    expect(await authenticator.authenticate([`Bearer ${ALICE}`])).toEqual({ ok: true, principal: 'alice' });
    expect(reads).toHaveLength(2);
  });

  const bootFailures: readonly (readonly [string, Record<string, string | undefined>, RegExp])[] = [
    ['a missing variable', { BOB_TOKEN: BOB }, /ALICE_TOKEN .*not set or empty/],
    ['an empty variable', { ALICE_TOKEN: '', BOB_TOKEN: BOB }, /ALICE_TOKEN .*not set or empty/],
    ['a value with a trailing newline', { ALICE_TOKEN: `${ALICE}\n`, BOB_TOKEN: BOB }, /ALICE_TOKEN does not hold a valid bearer token/],
    ['a value with a space', { ALICE_TOKEN: 'two words here', BOB_TOKEN: BOB }, /ALICE_TOKEN does not hold/],
    ['two principals sharing one token', { ALICE_TOKEN: ALICE, BOB_TOKEN: ALICE }, /ALICE_TOKEN and BOB_TOKEN hold the same token/],
  ];

  it.each(bootFailures)('refuses to boot with %s, naming the variable and never its value', (_name, env, pattern) => {
    let thrown: unknown;
    try {
      compileAuthenticator(config, { readEnv: (name) => env[name], logger: captureLog().logger });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    const message = (thrown as Error).message;
    expect(message).toMatch(pattern);
    const values = Object.values(env).filter((v): v is string => v !== undefined && v.trim().length >= 8);
    expect(leaks([message], values)).toBeUndefined();
  });

  it('warns at boot about a short token, naming the variable only', () => {
    const log = captureLog();
    compileAuthenticator(config, { readEnv: (name) => ({ ALICE_TOKEN: 'short', BOB_TOKEN: BOB })[name], logger: log.logger });
    const warnings = log.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.level === 40);
    expect(warnings).toEqual([expect.objectContaining({ env: 'ALICE_TOKEN' })]);
    expect(log.lines.join('\n')).not.toContain('"short"');
  });
});
