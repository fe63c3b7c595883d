import { describe, expect, it } from 'vitest';
import { EMBEDDED_DEFAULT_POLICY, loadPolicy, parsePolicy } from '../../src/policy/policy-load.js';
import { compilePolicyRules, compileUpstreamHosts, type PolicyRules } from '../../src/policy/policy-rules.js';

function rulesOf(raw: unknown): PolicyRules {
  const parsed = parsePolicy(raw);
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return compilePolicyRules(parsed.policy);
}

const defaults = compilePolicyRules(EMBEDDED_DEFAULT_POLICY);
const strictLoaded = loadPolicy('strict', '.');
if (!strictLoaded.ok) throw new Error(strictLoaded.problems.join('\n'));
const strict = compilePolicyRules(strictLoaded.policy);

describe('stdioEnvDenied under the default policy', () => {
  const denied = [
    'NODE_OPTIONS',
    'node_options',
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'LD_AUDIT',
    'DYLD_INSERT_LIBRARIES',
    'DYLD_LIBRARY_PATH',
    'BASH_ENV',
    'ENV',
    'BASH_FUNC_ls%%',
    'PROMPT_COMMAND',
    'PS4',
    'HTTP_PROXY',
    'https_proxy',
    'ALL_PROXY',
    'PYTHONSTARTUP',
    'PYTHONPATH',
    'PERL5OPT',
    'RUBYOPT',
    'GIT_SSH_COMMAND',
    'GIT_CONFIG_KEY_0',
    'JAVA_TOOL_OPTIONS',
    'NODE_TLS_REJECT_UNAUTHORIZED',
    'npm_config_registry',
    'UV_INDEX_URL',
  ];
  it.each(denied)('denies %s', (name) => expect(defaults.stdioEnvDenied(name)).toBe(true));

  const allowed = ['DEBUG', 'LOG_LEVEL', 'GITHUB_TOKEN', 'API_KEY', 'MY_ENV', 'ENVIRONMENT', 'PATH', 'NODE_ENV', 'LANG'];
  it.each(allowed)('allows %s', (name) => expect(defaults.stdioEnvDenied(name)).toBe(false));

  it('strict also denies PATH, every GIT_ variable and CA trust overrides', () => {
    for (const name of ['PATH', 'GIT_DIR', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE']) expect(strict.stdioEnvDenied(name)).toBe(true);
    expect(strict.stdioEnvDenied('DEBUG')).toBe(false);
  });
});

describe('envHeaderAllowed', () => {
  const cases: Array<[string, PolicyRules, string, boolean]> = [
    ['default: an ordinary token', defaults, 'DOCS_MCP_TOKEN', true],
    ['default: GITHUB_TOKEN (what GitHub\'s MCP server expects)', defaults, 'GITHUB_TOKEN', true],
    ['default: AWS keys', defaults, 'AWS_SECRET_ACCESS_KEY', false],
    ['default: AWS session token, any case', defaults, 'aws_session_token', false],
    ['default: Azure client secret', defaults, 'AZURE_CLIENT_SECRET', false],
    ['default: Google credentials file', defaults, 'GOOGLE_APPLICATION_CREDENTIALS', false],
    ['default: the GitHub Actions runtime token', defaults, 'ACTIONS_RUNTIME_TOKEN', false],
    ['default: a GitLab job token', defaults, 'CI_JOB_TOKEN', false],
    ['default: a Vault token', defaults, 'VAULT_TOKEN', false],
    ['default: the gateway\'s own settings', defaults, 'PORTCULLIS_AUTH_TOKEN', false],
    ['strict: nothing until listed', strict, 'DOCS_MCP_TOKEN', false],
    ['an allowlist admits its names', rulesOf({ envHeaderNames: { allow: ['DOCS_TOKEN', 'TEAM_*'] } }), 'TEAM_TOKEN', true],
    ['an allowlist refuses other names', rulesOf({ envHeaderNames: { allow: ['DOCS_TOKEN'] } }), 'OTHER_TOKEN', false],
    ['deny wins over allow', rulesOf({ envHeaderNames: { allow: ['AWS_*'] } }), 'AWS_SECRET_ACCESS_KEY', false],
    ['an empty deny list lifts the built-in one', rulesOf({ envHeaderNames: { deny: [] } }), 'AWS_SECRET_ACCESS_KEY', true],
  ];
  it.each(cases)('%s', (_what, rules, name, expected) => expect(rules.envHeaderAllowed(name)).toBe(expected));
});

describe('upstreamHostAllowed', () => {
  const listed = compileUpstreamHosts(['docs.example.com', '*.corp.example', '10.0.0.5', '[fd00::1]', '127.1']);
  const cases: Array<[string, boolean]> = [
    ['docs.example.com', true],
    ['DOCS.EXAMPLE.COM', true],
    ['docs.example.com.', true],
    ['example.com', false],
    ['evil-docs.example.com', false],
    ['docs.example.com.evil.net', false],
    ['a.corp.example', true],
    ['a.b.corp.example', true],
    ['corp.example', false],
    ['xcorp.example', false],
    ['10.0.0.5', true],
    ['10.0.0.6', false],
    ['[fd00::1]', true],
    ['[fd00::2]', false],
    ['127.0.0.1', true],
  ];
  it.each(cases)('%s → %s', (hostname, expected) => expect(listed(hostname)).toBe(expected));

  it('allows every host when the policy has no upstreamHosts', () => {
    expect(defaults.upstreamHostAllowed('anything.example.net')).toBe(true);
  });

  it('allows no host when upstreamHosts is empty (the strict template)', () => {
    expect(strict.upstreamHostAllowed('docs.example.com')).toBe(false);
  });

  it('refuses an entry that is not a host at compile time', () => {
    expect(() => compileUpstreamHosts(['[zz::1]'])).toThrow(TypeError);
  });
});

describe('privateNetworkAllowed', () => {
  it('follows privateNetwork.allowServers', () => {
    expect(defaults.privateNetworkAllowed).toBe(true);
    expect(strict.privateNetworkAllowed).toBe(false);
    expect(rulesOf({ privateNetwork: { allowServers: false } }).privateNetworkAllowed).toBe(false);
  });
});
