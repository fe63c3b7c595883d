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

describe('stdio env rules under the default policy (a deny-list)', () => {
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
    // config files, TLS libraries and package managers
    'OPENSSL_CONF',
    'OPENSSL_MODULES',
    'openssl_engines',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
    'SSLKEYLOGFILE',
    'HOME',
    'XDG_CONFIG_HOME',
    'XDG_DATA_DIRS',
    'PIP_CONFIG_FILE',
    'AWS_CONFIG_FILE',
    'NPM_CONFIG_USERCONFIG',
    'PIP_INDEX_URL',
    'PIP_TRUSTED_HOST',
    'UV_PYTHON',
    'YARN_NPM_REGISTRY_SERVER',
    'PNPM_HOME',
    'COREPACK_NPM_REGISTRY',
    'CURL_CA_BUNDLE',
    'CURL_HOME',
    'GIT_DIR',
    'GIT_SSL_NO_VERIFY',
    'SSH_AUTH_SOCK',
    'GNUPGHOME',
    'KUBECONFIG',
    'DOCKER_HOST',
    'DOCKER_CONFIG',
    'CARGO_HOME',
    'RUSTUP_TOOLCHAIN',
    'RUSTC_WRAPPER',
    'GOFLAGS',
    'GOPROXY',
    'GOTOOLCHAIN',
    'DENO_DIR',
    'BUN_CONFIG_REGISTRY',
    'BUNDLE_GEMFILE',
    'GEM_HOME',
    'MAVEN_OPTS',
    'GRADLE_OPTS',
    'GRADLE_USER_HOME',
    'JAVA_HOME',
    'CLASSPATH',
    'NODE_EXTRA_CA_CERTS',
    'REQUESTS_CA_BUNDLE',
    'PYTHONUSERBASE',
    'VIRTUAL_ENV',
    'GCONV_PATH',
    'LESSOPEN',
    'ELECTRON_RUN_AS_NODE',
    'DOTNET_ROOT',
    'COMPlus_EnableDiagnostics',
  ];
  it.each(denied)('denies %s', (name) => expect(defaults.stdio.envVerdict(name)).toBe('denied'));

  const allowed = ['DEBUG', 'LOG_LEVEL', 'GITHUB_TOKEN', 'GITHUB_PERSONAL_ACCESS_TOKEN', 'GITLAB_TOKEN', 'API_KEY', 'MY_ENV', 'ENVIRONMENT', 'PATH', 'NODE_ENV', 'LANG', 'CORS_ORIGIN', 'GOOGLE_API_KEY'];
  it.each(allowed)('allows %s', (name) => expect(defaults.stdio.envVerdict(name)).toBe('ok'));
});

describe('stdio env rules under an allowlist', () => {
  it('strict admits only its short list of harmless names, and the deny-list still applies', () => {
    for (const name of ['LANG', 'LC_ALL', 'TZ', 'NO_COLOR', 'DEBUG', 'NODE_ENV', 'PYTHONUNBUFFERED']) expect(strict.stdio.envVerdict(name)).toBe('ok');
    for (const name of ['MY_ENV', 'API_KEY', 'GITHUB_TOKEN']) expect(strict.stdio.envVerdict(name)).toBe('unlisted');
    for (const name of ['PATH', 'HOME', 'OPENSSL_CONF', 'GIT_DIR', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE']) expect(strict.stdio.envVerdict(name)).toBe('denied');
  });

  it('lets an operator add names and prefixes, without lifting the deny-list', () => {
    const rules = rulesOf({ stdioAllowedEnv: ['MYAPP_*', 'HOME', '*'] });
    expect(rules.stdio.envVerdict('MYAPP_MODE')).toBe('ok');
    expect(rules.stdio.envVerdict('ANYTHING')).toBe('ok');
    expect(rules.stdio.envVerdict('HOME')).toBe('denied');
    expect(rules.stdio.envVerdict('NODE_OPTIONS')).toBe('denied');
  });

  it('an empty allowlist admits no variable at all', () => {
    expect(rulesOf({ stdioAllowedEnv: [] }).stdio.envVerdict('LANG')).toBe('unlisted');
  });
});

describe('stdioCommands', () => {
  const rules = rulesOf({ stdioCommands: ['node', 'uvx', '/usr/local/bin/server', '/opt/tools/../mcp/run'] });
  const cases: Array<[string, boolean]> = [
    ['node', true],
    ['uvx', true],
    ['npx', false],
    ['Node', false],
    ['/usr/local/bin/server', true],
    ['/usr/local/bin/./server', true],
    ['/usr/local/lib/../bin/server', true],
    ['/opt/mcp/run', true],
    // a bare entry never admits a path of the same name, nor a relative path
    ['/tmp/evil/node', false],
    ['./node', false],
    ['bin/node', false],
    ['../node', false],
    ['/usr/local/bin/server2', false],
  ];
  it.each(cases)('%s → %s', (command, expected) => expect(rules.stdio.commandAllowed(command)).toBe(expected));

  it('allows every command when the policy has no stdioCommands, and none when it is empty', () => {
    expect(defaults.stdio.commandAllowed('/tmp/anything')).toBe(true);
    expect(rulesOf({ stdioCommands: [] }).stdio.commandAllowed('node')).toBe(false);
  });

  it('makes PATH unsettable while a command allowlist is present (PATH decides what a bare name runs)', () => {
    expect(rules.stdio.envVerdict('PATH')).toBe('denied');
    expect(rules.stdio.envVerdict('PATHEXT')).toBe('denied');
    expect(defaults.stdio.envVerdict('PATH')).toBe('ok');
  });

  it('refuses an entry that is neither a program name nor an absolute path', () => {
    for (const entry of ['./node', 'bin/node', '', '..', 'a b']) {
      expect(parsePolicy({ stdioCommands: [entry] }).ok, entry).toBe(false);
    }
  });
});

describe('stdioAllowCwd', () => {
  it('is allowed by default and refused by strict', () => {
    expect(defaults.stdio.cwdAllowed).toBe(true);
    expect(strict.stdio.cwdAllowed).toBe(false);
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

  it('follows privateNetwork.allowInfrastructure for the gateway\'s own connections', () => {
    expect(defaults.infrastructurePrivateNetworkAllowed).toBe(true);
    expect(strict.infrastructurePrivateNetworkAllowed).toBe(true);
    expect(rulesOf({ privateNetwork: { allowInfrastructure: false } }).infrastructurePrivateNetworkAllowed).toBe(false);
  });
});

describe('infrastructureHostAllowed', () => {
  it('allows every host without infrastructureHosts, none with an empty list, listed ones otherwise', () => {
    expect(defaults.infrastructureHostAllowed('redis.internal')).toBe(true);
    expect(strict.infrastructureHostAllowed('127.0.0.1')).toBe(false);
    const listed = rulesOf({ infrastructureHosts: ['redis.internal', '*.replicas.internal'] });
    expect(listed.infrastructureHostAllowed('REDIS.internal')).toBe(true);
    expect(listed.infrastructureHostAllowed('a.replicas.internal')).toBe(true);
    expect(listed.infrastructureHostAllowed('docs.example.com')).toBe(false);
    // the two lists are apart: a host listed for servers is not one for infrastructure
    expect(rulesOf({ upstreamHosts: ['redis.internal'] }).infrastructureHostAllowed('redis.internal')).toBe(true);
    expect(rulesOf({ upstreamHosts: ['x.example'], infrastructureHosts: [] }).infrastructureHostAllowed('x.example')).toBe(false);
  });
});
