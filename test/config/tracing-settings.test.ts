/**
 * `resolveTracing`: the `tracing` block first, then the standard OTEL_* variables; every URL
 * through the one egress check; problems name the field or variable, never a URL or a header value.
 */
import { describe, expect, it } from 'vitest';
import { resolveTracing } from '../../src/config/tracing-settings.js';
import { tracingConfigSchema } from '../../src/config/telemetry-schema.js';
import { ConfigError } from '../../src/errors.js';
import { loadPolicy } from '../../src/policy/policy-load.js';
import { compilePolicyRules } from '../../src/policy/policy-rules.js';

const loaded = loadPolicy(undefined, process.cwd());
if (!loaded.ok) throw new Error('the embedded policy must load');
const rules = compilePolicyRules(loaded.policy);
const block = (value: Record<string, unknown>) => tracingConfigSchema.parse(value);

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('resolveTracing', () => {
  it('is off with neither a block nor OTEL variables', () => {
    expect(resolveTracing(undefined, {}, rules)).toBeUndefined();
  });

  it('appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT and uses the traces variable as it is', () => {
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318/' }, rules)?.endpoint).toBe('https://otel.example:4318/v1/traces');
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b.example/custom' };
    expect(resolveTracing(undefined, env, rules)?.endpoint).toBe('https://b.example/custom');
  });

  it('prefers the block over the variables, and defaults to protobuf, full sampling and the portcullis service', () => {
    const settings = resolveTracing(block({ endpoint: 'https://c.example/v1/traces' }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example' }, rules);
    expect(settings).toMatchObject({ endpoint: 'https://c.example/v1/traces', protocol: 'http/protobuf', sampleRatio: 1, serviceName: 'portcullis' });
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example', OTEL_SERVICE_NAME: 'edge' }, rules)?.serviceName).toBe('edge');
  });

  it.each([
    [{ OTEL_SDK_DISABLED: 'true' }],
    [{ OTEL_TRACES_EXPORTER: 'none' }],
  ])('is turned off by %o unless the block says enabled: true', (off) => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example', ...off };
    expect(resolveTracing(undefined, env, rules)).toBeUndefined();
    expect(resolveTracing(block({ enabled: true }), env, rules)?.endpoint).toBe('https://a.example/v1/traces');
  });

  it('stays off with enabled: false whatever the environment says', () => {
    expect(resolveTracing(block({ enabled: false, endpoint: 'https://c.example' }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example' }, rules)).toBeUndefined();
  });

  it('refuses exporters and protocols it does not build, naming the variable', () => {
    expect(problemsOf(() => resolveTracing(undefined, { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example' }, rules))).toEqual([
      'OTEL_TRACES_EXPORTER: only "otlp" (over HTTP) or "none" is supported',
    ]);
    expect(problemsOf(() => resolveTracing(undefined, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example' }, rules))[0]).toContain('OTEL_EXPORTER_OTLP_PROTOCOL');
  });

  it('holds a URL from a variable to the egress rule, naming the variable and never the URL', () => {
    const problems = problemsOf(() => resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://10.1.2.3:4318' }, rules));
    expect(problems.join('\n')).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(problems.join('\n')).not.toContain('10.1.2.3');
    // Plain http to the private network with the opt-in is the operator's choice (never to a public address).
    expect(resolveTracing(block({ allowPrivateNetwork: true }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://10.1.2.3:4318' }, rules)?.allowPrivateNetwork).toBe(true);
  });

  it('refuses the private-network opt-in where the policy forbids it for infrastructure', () => {
    const strict = compilePolicyRules({ ...loaded.policy, privateNetwork: { ...loaded.policy.privateNetwork, allowInfrastructure: false } });
    const problems = problemsOf(() => resolveTracing(block({ allowPrivateNetwork: true }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, strict));
    expect(problems).toContain('tracing.allowPrivateNetwork: the policy does not allow private-network connections for the gateway\'s own services');
  });

  it('reads OTEL headers and envHeaders without ever echoing a value', () => {
    const settings = resolveTracing(block({ envHeaders: { Authorization: 'OTLP_TOKEN' } }), {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=core,x-key=a%2Cb',
      OTLP_TOKEN: 'Bearer t0k3n',
    }, rules);
    expect(settings?.headers).toEqual({ 'x-team': 'core', 'x-key': 'a,b', authorization: 'Bearer t0k3n' });
    const problems = problemsOf(() =>
      resolveTracing(block({ envHeaders: { Authorization: 'MISSING_TOKEN' } }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a.example', OTEL_EXPORTER_OTLP_HEADERS: 'novalue-s3cret' }, rules),
    );
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).not.toContain('s3cret');
    expect(problems.join('\n')).toContain('MISSING_TOKEN');
  });

  it('refuses enabled: true without any endpoint', () => {
    expect(problemsOf(() => resolveTracing(block({ enabled: true }), {}, rules))[0]).toContain('tracing.endpoint');
  });
});

describe('configSecrets and the trace exporter', () => {
  it('masks the exporter header values from envHeaders and the OTEL header variables', async () => {
    const { configSecrets } = await import('../../src/config/secrets.js');
    const { parseConfig } = await import('../../src/config/load.js');
    const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, tracing: { envHeaders: { Authorization: 'OTLP_TOKEN' } }, servers: {} });
    const secrets = configSecrets(config, { OTLP_TOKEN: 'Bearer abc', OTEL_EXPORTER_OTLP_HEADERS: 'x-key=k%2C1,x-other=plain' });
    expect(secrets).toEqual(expect.arrayContaining(['Bearer abc', 'k%2C1', 'k,1', 'plain']));
  });
});
