import { describe, expect, it } from 'vitest';
import {
  gatewayAgentKey,
  isAgentName,
  isPluginName,
  isPluginServerName,
  pluginAgentKey,
  pluginAgentName,
  pluginKey,
  pluginServerKey,
  pluginServerName,
  quoteName,
} from '../../src/plugins/naming.js';

describe('plugin names (Agent Plugins 1.0 §5.5)', () => {
  it.each(['my-plugin', 'acme.tools', 'lint3r', 'a', 'a'.repeat(64)])('accepts %s', (name) => {
    expect(isPluginName(name)).toBe(true);
  });
  it.each(['My-Plugin', '-start', 'end-', 'has--double', 'too.many..dots', '', 'a'.repeat(65), '.hidden', 'with/slash', 'x y', 'a:b'])(
    'refuses %j',
    (name) => {
      expect(isPluginName(name)).toBe(false);
    },
  );
});

describe('agent names', () => {
  it.each(['reviewer', 'code-reviewer', 'a1-b2', 'x'.repeat(64)])('accepts %s', (name) => {
    expect(isAgentName(name)).toBe(true);
  });
  it.each(['', 'Reviewer', 'code_reviewer', '-lead', 'trail-', 'dou--ble', 'x'.repeat(65), 'a:b', 'a.b'])('refuses %j', (name) => {
    expect(isAgentName(name)).toBe(false);
  });
});

describe('plugin server names', () => {
  it('accepts config-style names without dots, so <plugin>.<server> splits at its last dot', () => {
    expect(isPluginServerName('files_v2-x')).toBe(true);
    expect(isPluginServerName('a.b')).toBe(false);
    expect(isPluginServerName('_lead')).toBe(false);
    expect(isPluginServerName('__proto__')).toBe(false);
    expect(isPluginServerName('x'.repeat(49))).toBe(false);
  });
});

describe('joined names and durable keys', () => {
  it('joins servers with "." and agents with ":"', () => {
    expect(pluginServerName('acme.tools', 'files')).toBe('acme.tools.files');
    expect(pluginAgentName('acme', 'reviewer')).toBe('acme:reviewer');
  });
  it('derives keys from the source and the declared name, never from ids', () => {
    expect(pluginKey('acme')).toBe('plugin:acme');
    expect(pluginServerKey('acme', 'files')).toBe('plugin:acme#mcp=files');
    expect(pluginAgentKey('acme', 'reviewer')).toBe('plugin:acme#agent=reviewer');
    expect(gatewayAgentKey('reviewer')).toBe('agents#agent=reviewer');
  });
  it('quotes plugin-authored names so control characters cannot forge a log line', () => {
    expect(quoteName('a\nb')).toBe('"a\\nb"');
    expect(quoteName('x'.repeat(100))).toBe(JSON.stringify(`${'x'.repeat(64)}…`));
  });
});
