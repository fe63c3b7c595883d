import { describe, expect, it } from 'vitest';
import { buildChildEnv, isInheritedEnvName } from '../../src/upstream/child-env.js';

const parent = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/op',
  USER: 'op',
  LANG: 'en_GB.UTF-8',
  TZ: 'Europe/London',
  TMPDIR: '/tmp',
  SHELL: '/bin/zsh',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  DOCS_MCP_TOKEN: 'docs-token',
  NODE_OPTIONS: '--require /evil.js',
  UNSET: undefined,
};

/** An env whose own key is "__proto__", as JSON.parse of a config file would produce. */
const protoEnv = (): Record<string, string> => JSON.parse('{"__proto__":"v"}') as Record<string, string>;

describe('buildChildEnv', () => {
  it.each([
    [
      'inherits only the minimal set',
      parent,
      {},
      { PATH: '/usr/bin:/bin', HOME: '/home/op', USER: 'op', LANG: 'en_GB.UTF-8', TZ: 'Europe/London', TMPDIR: '/tmp' },
    ],
    [
      'lets explicit values win',
      { PATH: '/usr/bin', HOME: '/h' },
      { PATH: '/opt/bin', API_KEY: 'k' },
      { PATH: '/opt/bin', HOME: '/h', API_KEY: 'k' },
    ],
    [
      'passes explicit names outside the set through',
      {},
      { DOCS_MCP_TOKEN: 'x', SHELL: '/bin/sh' },
      { DOCS_MCP_TOKEN: 'x', SHELL: '/bin/sh' },
    ],
    ['drops bash exported functions (Shellshock)', { PATH: '/bin', TERM: '() { :; }; echo pwned' }, {}, { PATH: '/bin' }],
    ['keeps an explicit value starting with "()" (the operator wrote it)', {}, { X: '() x' }, { X: '() x' }],
    ['matches inherited names exactly on POSIX', { Path: '/x', path: '/y', PATH: '/z' }, {}, { PATH: '/z' }],
    ['leaves out unset variables', { HOME: undefined }, {}, {}],
    ['keeps "__proto__" an ordinary variable', {}, protoEnv(), protoEnv()],
  ])('%s', (_name, parentEnv, explicitEnv, expected) => {
    const env = buildChildEnv(parentEnv, explicitEnv, { platform: 'linux' });
    expect(env).toStrictEqual(expected);
    expect(Object.getPrototypeOf(env)).toBe(Object.prototype);
  });

  it.each([
    [
      'inherits Windows names whatever their case',
      { Path: 'C:\\bin', SystemRoot: 'C:\\Windows', Secret: 's' },
      {},
      { Path: 'C:\\bin', SystemRoot: 'C:\\Windows' },
    ],
    [
      'lets an explicit value replace an inherited name of another case',
      { Path: 'C:\\bin', TEMP: 'C:\\t' },
      { PATH: 'D:\\bin' },
      { TEMP: 'C:\\t', PATH: 'D:\\bin' },
    ],
    ['does not inherit POSIX-only names', { HOME: '/h', TMPDIR: '/t', USERPROFILE: 'C:\\u' }, {}, { USERPROFILE: 'C:\\u' }],
  ])('on Windows %s', (_name, parentEnv, explicitEnv, expected) => {
    expect(buildChildEnv(parentEnv, explicitEnv, { platform: 'win32' })).toStrictEqual(expected);
  });

  it.each([
    ['an empty name', { '': 'v' }],
    ['a name with "="', { 'A=B': 'v' }],
    ['a value with NUL', { TOKEN: 'sec\0ret' }],
  ])('refuses %s without showing the value', (_name, explicitEnv) => {
    expect(() => buildChildEnv({}, explicitEnv, { platform: 'linux' })).toThrow(TypeError);
    try {
      buildChildEnv({}, explicitEnv, { platform: 'linux' });
    } catch (error) {
      expect((error as Error).message).not.toContain('sec');
    }
  });

  it('skips an inherited value with NUL instead of failing the spawn', () => {
    expect(buildChildEnv({ PATH: '/bin\0/evil', HOME: '/h' }, {}, { platform: 'linux' })).toStrictEqual({ HOME: '/h' });
  });
});

describe('isInheritedEnvName', () => {
  it.each([
    ['PATH', 'linux', true],
    ['Path', 'linux', false],
    ['SHELL', 'linux', false],
    ['Path', 'win32', true],
    ['SystemRoot', 'win32', true],
    ['HOME', 'win32', false],
  ] as const)('%s on %s is %s', (name, platform, expected) => {
    expect(isInheritedEnvName(name, platform)).toBe(expected);
  });
});
